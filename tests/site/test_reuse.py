"""What `tooling serve`'s builds take over from the build before (tooling.site.reuse): each piece
of other plugins' work it keeps answers as the plugin itself answers, and is given back only
while what it was made from is the same. (tests/site/test_serve_builds.py holds the whole site
these builds serve to a full build's.)"""
from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs_literate_nav import plugin as literate
from mkdocs_static_i18n import suffix

from tooling.site import reuse

LANGUAGES = ["en", "ko"]
# Paths of a docs folder in the suffix structure: pages, their translations, assets, odd spellings
NAMES = st.sampled_from(["index", "README", "a", "b.c", "SUMMARY"])
SUFFIXES = st.sampled_from([".md", ".ko.md", ".en.md", ".png", ".ko.png", ""])
FOLDERS = st.lists(st.sampled_from(["generated", "incidents", "ko", "x.y"]), max_size=2)
PATHS = st.builds(lambda folders, name, end: "/".join([*folders, name + end]), FOLDERS, NAMES, SUFFIXES)
ASKED = st.one_of(PATHS, st.sampled_from([".", "./a.md", "generated//a.md", "generated/./index.md", "a/"]))


def test_serve_takes_over_the_work_of_each_plugin_it_knows() -> None:
    originals = (suffix.create_i18n_file, suffix.I18nFiles.get_file_from_path, literate.resolve_directories_in_nav)
    reuse.install()
    try:  # the versions installed here are those it knows: none is left doing its work at every build
        assert sorted(name for _, name, _ in reuse._installed) == [
            "create_i18n_file", "get_file_from_path", "is_relative_to", "resolve_directories_in_nav"]
    finally:
        reuse.uninstall()
    assert (suffix.create_i18n_file, suffix.I18nFiles.get_file_from_path,
            literate.resolve_directories_in_nav) == originals


def _files(paths: list[str], docs: str = "/docs", site: str = "/site") -> list[File]:
    return [File(path, docs, site, True) for path in dict.fromkeys(paths)]


@given(paths=st.lists(PATHS, max_size=12), asked=ASKED, current=st.sampled_from(LANGUAGES))
def test_a_path_names_the_file_static_i18n_itself_finds(paths: list[str], asked: str, current: str) -> None:
    plugin = SimpleNamespace(current_language=current, default_language="en")
    files = suffix.I18nFiles(plugin, _files(paths))
    try:
        expected: Any = suffix.I18nFiles.get_file_from_path(files, asked)
    except ValueError as exc:  # a path pathlib cannot give a suffix: refused the same way
        expected = type(exc)
    reuse.install()
    try:
        found: Any = files.get_file_from_path(asked)
    except ValueError as exc:
        found = type(exc)
    finally:
        reuse.uninstall()
    assert found is expected


@given(paths=st.lists(PATHS, min_size=1, max_size=6), current=st.sampled_from(LANGUAGES))
def test_a_kept_file_of_an_edition_is_the_one_static_i18n_makes(paths: list[str], current: str) -> None:
    config = SimpleNamespace(docs_dir="/docs", site_dir="/site", use_directory_urls=True)
    calls: list[str] = []  # each file static-i18n itself made

    def make(file: File, *args: Any) -> File:
        calls.append(file.src_uri)
        return suffix.create_i18n_file(file, *args)

    kept = reuse._kept_i18n_files(make)
    for file in _files(paths):
        fresh = suffix.create_i18n_file(file, current, "en", LANGUAGES, config)
        first, again = (kept(file, current, "en", LANGUAGES, config) for _ in range(2))
        for made in (first, again):
            assert made is not fresh and made.alternates == {current: made}  # its own, listing itself
            assert {k: v for k, v in vars(made).items() if k != "alternates"} == \
                   {k: v for k, v in vars(fresh).items() if k != "alternates"}
        first.inclusion = InclusionLevel.NOT_IN_NAV  # what a build does to its own copy
        assert kept(file, current, "en", LANGUAGES, config).inclusion == file.inclusion
    assert sorted(calls) == sorted(set(paths))  # once each


class _Said(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _docs(root: Path, pages: dict[str, str]) -> Files:
    for name, text in pages.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return Files(_files(sorted(pages), docs=str(root)))


def test_a_kept_navigation_is_given_back_while_its_summaries_are_the_same(tmp_path: Path) -> None:
    made: list[str] = []  # each navigation literate-nav itself made

    def make(*args: Any, **kwargs: Any) -> Any:
        made.append(args[1].get_file_from_path("SUMMARY.md").content_string)
        return literate.resolve_directories_in_nav(*args, **kwargs)

    resolve = reuse._kept_navs(make)
    pages = {"index.md": "# Home\n", "a.md": "# A\n", "b.md": "# B\n", "SUMMARY.md": "* [A](a.md)\n* [B](b.md)\n"}
    said, logger = _Said(), logging.getLogger("mkdocs.plugins.mkdocs_literate_nav")
    logger.addHandler(said)
    try:
        navs = []
        # the same twice, a summary changed, then one that warns (a folder's summary leads back up), twice
        for summary in ("* [A](a.md)\n* [B](b.md)\n", None, "* [B](b.md)\n", "* [A](a.md)\n* [Sub](sub/)\n", None):
            if summary is not None:
                pages["SUMMARY.md"] = summary
            if summary and "sub/" in summary:
                pages.update({"sub/x.md": "# X\n", "sub/SUMMARY.md": "* [X](x.md)\n* [Up](../)\n"})
            files = _docs(tmp_path, pages)
            navs.append(resolve(None, files, "SUMMARY.md", implicit_index=False))
            expected = literate.resolve_directories_in_nav(None, _docs(tmp_path, pages), "SUMMARY.md",
                                                           implicit_index=False)
            assert navs[-1] == expected
            # as literate-nav leaves it: the summary is no page of the navigation
            assert files.get_file_from_path("SUMMARY.md").inclusion == InclusionLevel.NOT_IN_NAV
    finally:
        logger.removeHandler(said)
    assert navs[0] == navs[1] == [{"A": "a.md"}, {"B": "b.md"}] and navs[2] == [{"B": "b.md"}]
    assert len(made) == 4  # not for the second build, which read the same summary
    # a navigation that warned is made (and warns) again, as a strict build must fail again
    assert said.lines == ["Disallowing recursion '.' -> 'sub' -> '.'"] * 4
