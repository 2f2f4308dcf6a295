"""What the builds of one `tooling serve` take over from the build before: the work of other
plugins that is a function of inputs an edit seldom changes, done again only when they change.

Every build of mkdocs remakes, from every file of the site, what only a file added, removed or
renamed changes: mkdocs-static-i18n a file of each edition for each file (a third of a build
of 1,000 incidents) and literate-nav the navigation from the SUMMARY files (an eighth). Under
`tooling serve` (playbook-editions' on_startup) both are kept here, by everything they read:

- static-i18n's ``create_i18n_file``: by the file's source and destination, its inclusion, the
  edition and the folders; each build gets a copy of the file made before, as fresh as one
  made anew (its own alternates).
- literate-nav's ``resolve_directories_in_nav``: by the configured nav, its options and every
  page's path; kept only when it said nothing (a warning must be said again, and fail a strict
  build again), and given back only while each SUMMARY file it read is the one it read then.

A plugin whose code is not what this knows is left alone (its builds then do the work).
tests/site/test_serve_builds.py holds the site these builds serve to a full build's, byte for byte.
"""
from __future__ import annotations

import inspect
import logging
import os
import pickle
from collections.abc import Callable
from functools import lru_cache
from pathlib import PurePath
from typing import Any

Patch = tuple[Any, str, Any]  # (module, name, what was there)

_installed: list[Patch] = []
_I18N_PARAMS = ["file", "current_language", "default_language", "all_languages", "config"]
_NAV_PARAMS = ["nav_data", "files", "nav_file_name", "implicit_index", "markdown_config"]
_KEPT_NAVS = 8  # navigations kept: a few per edition (an edit undone finds its own again)


def install() -> None:
    """Keep what the plugins make, for the builds of this process (`tooling serve`'s mkdocs)."""
    if _installed:
        return
    try:
        from mkdocs_static_i18n import suffix
    except ImportError:
        suffix = None
    if suffix is not None and _params(getattr(suffix, "create_i18n_file", None)) == _I18N_PARAMS:
        _patch(suffix, "create_i18n_file", _kept_i18n_files(suffix.create_i18n_file))
        _i18n_lookups()
    try:
        from mkdocs_literate_nav import plugin as literate
    except ImportError:
        literate = None
    if literate is not None and _params(getattr(literate, "resolve_directories_in_nav", None)) == _NAV_PARAMS:
        _patch(literate, "resolve_directories_in_nav", _kept_navs(literate.resolve_directories_in_nav))


def uninstall() -> None:
    while _installed:
        module, name, original = _installed.pop()
        setattr(module, name, original)


def _params(function: Any) -> list[str] | None:
    return list(inspect.signature(function).parameters) if callable(function) else None


def _patch(module: Any, name: str, replacement: Any) -> None:
    _installed.append((module, name, getattr(module, name)))
    setattr(module, name, replacement)


def _kept_i18n_files(create: Callable[..., Any]) -> Callable[..., Any]:
    """static-i18n's file of an edition, made once for the same inputs; what it reads of
    ``file`` is its source, its destination and its inclusion."""
    made: dict[tuple[Any, ...], Any] = {}
    last: list[Any] = [None, ()]  # the build's configuration and what is read of it (read once a build)

    def create_i18n_file(file: Any, current_language: str, default_language: str, all_languages: list[str],
                         config: Any) -> Any:
        if last[0] is not config:
            last[:] = [config, (config.docs_dir, config.site_dir, config.use_directory_urls)]
        key = (file.src_uri, file.dest_uri, file.inclusion, current_language, default_language, tuple(all_languages),
               *last[1])
        kept = made.get(key)
        if kept is None:
            fresh = create(file, current_language, default_language, all_languages, config)
            made[key] = _clone(fresh)  # as made: the build changes its own (its page, its inclusion)
            return fresh
        again = _clone(kept)
        again.alternates = {current_language: again}  # a file lists itself among its alternates
        return again

    return create_i18n_file


def _clone(file: Any) -> Any:
    """A file with the same attributes (a shallow copy, without copy's generic protocol)."""
    twin = object.__new__(type(file))
    twin.__dict__.update(file.__dict__)
    return twin


def _i18n_lookups() -> None:
    """static-i18n's two questions asked of every file at every build, each answered from
    strings once (they parsed paths with pathlib each time): whether a file is under the docs
    folder, and which files a path may name in the edition (its own, the default, as written)."""
    import mkdocs_static_i18n
    from mkdocs_static_i18n import reconfigure, suffix

    if not str(getattr(mkdocs_static_i18n, "version", "")).startswith("1."):
        return  # the lookups below are 1.x's, answered the same
    _patch(reconfigure, "is_relative_to", lru_cache(maxsize=1 << 16)(reconfigure.is_relative_to))

    @lru_cache(maxsize=1 << 16)
    def candidates(path: str, current: str, default: str) -> tuple[str, ...]:
        uri = PurePath(path)
        if uri == PurePath("."):
            uri = PurePath("index.md")
        return (uri.with_suffix(f".{current}{uri.suffix}").as_posix(),
                uri.with_suffix(f".{default}{uri.suffix}").as_posix(), uri.as_posix())

    def get_file_from_path(self: Any, path: str) -> Any:
        for uri in candidates(path, self.plugin.current_language, self.plugin.default_language):
            file = self.src_uris.get(uri)
            if file:
                return file
        return None

    _patch(suffix.I18nFiles, "get_file_from_path", get_file_from_path)


class _Heard(logging.Handler):
    """Whether literate-nav said anything while it made a navigation."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.said = False

    def emit(self, record: logging.LogRecord) -> None:
        self.said = True


def _kept_navs(resolve: Callable[..., Any]) -> Callable[..., Any]:
    """literate-nav's navigation, made again only when a page is added, removed or renamed, a
    SUMMARY file it reads changes, or its configuration does."""
    kept: dict[tuple[Any, ...], tuple[list[tuple[str, str | None, str | None]], bytes]] = {}

    def resolve_directories_in_nav(nav_data: Any, files: Any, nav_file_name: str, *, implicit_index: bool,
                                   markdown_config: dict[str, Any] | None = None) -> Any:
        key = (repr(nav_data), nav_file_name, implicit_index, repr(markdown_config), type(files).__name__,
               tuple((f.src_uri, f.name) for f in files if f.is_documentation_page()))
        found = kept.get(key)
        if found is not None and all(_summary(files, path) == (uri, text) for path, uri, text in found[0]):
            for path, uri, _ in found[0]:
                if uri is not None:
                    _out_of_nav(files.get_file_from_path(path))
            return pickle.loads(found[1])
        read: list[tuple[str, str | None, str | None]] = []
        lookup = files.get_file_from_path

        def get_file_from_path(path: str) -> Any:
            file = lookup(path)
            if os.path.basename(path) == nav_file_name:
                read.append((path, *_summary(files, path, file)))
            return file

        heard, logger = _Heard(), logging.getLogger("mkdocs.plugins.mkdocs_literate_nav")
        logger.addHandler(heard)
        files.get_file_from_path = get_file_from_path  # this call's lookups, noted
        try:
            nav = resolve(nav_data, files, nav_file_name, implicit_index=implicit_index,
                          markdown_config=markdown_config)
        finally:
            del files.get_file_from_path
            logger.removeHandler(heard)
        if not heard.said:
            kept[key] = (read, pickle.dumps(nav))
            while len(kept) > _KEPT_NAVS:
                del kept[next(iter(kept))]
        return nav

    return resolve_directories_in_nav


def _summary(files: Any, path: str, file: Any = False) -> tuple[str | None, str | None]:
    """The SUMMARY file the build finds at ``path`` (its source and text), as literate-nav reads it."""
    if file is False:
        file = files.get_file_from_path(path)
    return (None, None) if file is None else (file.src_uri, file.content_string)


def _out_of_nav(file: Any) -> None:
    """What literate-nav does to each SUMMARY file it reads: not a page of the navigation."""
    from mkdocs.structure.files import InclusionLevel

    if file is not None and file.inclusion.is_in_nav():
        file.inclusion = InclusionLevel.NOT_IN_NAV
