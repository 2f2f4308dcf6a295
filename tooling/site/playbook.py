"""The mkdocs plugin `playbook` (mkdocs.yml): the playbook the package ships, in a team's site.

A team's repository holds its records and an mkdocs.yml that names this plugin; the pages of the
playbook (both languages), their navigation (``SUMMARY.md``), assets and theme overrides come from
the package (tooling.records.shipped), so that an upgrade of the package upgrades the playbook.
The plugin adds to the build:

- every shipped file of ``docs/`` that the team's docs folder has no file of the same path for
  (the team's page wins; a team page ``P.md`` also hides the shipped translations ``P.ko.md``, so
  the other edition shows the team's page, marked untranslated, not the shipped one);
- the shipped theme overrides, after the team's own ``custom_dir`` (a team template wins);
- the shipped stylesheets and scripts (:data:`EXTRA_CSS`, :data:`EXTRA_JAVASCRIPT`), the files
  kept out of the pages (:data:`EXCLUDED`: snippets `tooling build` writes, navigation files, the
  overrides) and the docs folder as a snippets base path, each only where mkdocs.yml lacks it;
- the markdown extensions the shipped pages are written for, where mkdocs.yml names none of them.

Order in mkdocs.yml: after ``i18n`` (mkdocs-static-i18n) and before ``literate-nav``. The shipped
files join the build before static-i18n sorts the files into editions (which takes a file to be
in the docs folder), and are pointed at the package's copy after it, before literate-nav reads
the navigation; both of those hooks run at priority -100, in mkdocs.yml's order. A mis-ordered
mkdocs.yml is refused with the order to use. In this repository, whose docs folder is the
shipped one, the plugin adds the lists alone (the pages are already there).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import File, Files, set_exclusions
from mkdocs.structure.pages import Page
from pathspec.gitignore import GitIgnoreSpec

from tooling.records.shipped import shipped_root

NAME = "playbook"  # as mkdocs.yml names it (pyproject.toml's entry point)
EXTRA_CSS = (
    "assets/vendor/noto-sans-kr/hangul.css",  # Hangul where the reader has no Korean font
    "assets/stylesheets/playbook.css",
)
EXTRA_JAVASCRIPT = (
    "assets/vendor/tablesort/tablesort.min.js",
    "assets/vendor/tablesort/tablesort.number.min.js",
    "assets/javascripts/tablesort.js",
    "assets/javascripts/freshness.js",  # stale banners and on-call by the reader's clock
    "assets/javascripts/scrollable.js",  # a code block wider than a phone is keyboard-scrollable
    "assets/javascripts/lookup.js",  # the home page's way in from an error line
    "assets/javascripts/filters.js",  # the incident log's filters, in place
)
# Not pages: the snippets `tooling build` writes for the home and severity pages, the navigation
# files (literate-nav reads them) and the theme overrides
EXCLUDED = ("generated/home-cards*.md", "generated/paged*.md", "generated/status*.md", "generated/response*.md",
            "generated/lookup*.md", "SUMMARY*.md", "overrides/")
# What the shipped pages are written with (added only to an mkdocs.yml that names none of them)
MARKDOWN_EXTENSIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("admonition", {}), ("attr_list", {}), ("md_in_html", {}), ("tables", {}), ("toc", {"permalink": True}),
    ("pymdownx.details", {}), ("pymdownx.superfences", {}), ("pymdownx.inlinehilite", {}),
    ("pymdownx.highlight", {}), ("pymdownx.snippets", {"check_paths": True}),
)
NOT_ADDED = ("generated/", "overrides/")  # written by each build; joined to the theme instead


def names_plugin(config: dict[str, Any]) -> bool:
    """Whether mkdocs.yml (as tooling reads it) names this plugin."""
    return any((p if isinstance(p, str) else next(iter(p), None)) == NAME
               for p in (config.get("plugins") or []) if isinstance(p, (str, dict)))


def excluded_lines(config: dict[str, Any]) -> list[str]:
    """The gitignore lines of the files mkdocs keeps out of the pages, as mkdocs.yml and this
    plugin say them (tooling.site.source: no front matter for those)."""
    own = str(config.get("exclude_docs") or "").splitlines()
    return own + [line for line in EXCLUDED if line not in own] if names_plugin(config) else own


def _same(a: str | Path, b: str | Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _order(config: MkDocsConfig) -> None:
    """After i18n, before literate-nav (see the module's docstring), or a located refusal."""
    names = list(config.plugins)
    at = names.index(NAME)
    if ("i18n" in names and names.index("i18n") > at) or ("literate-nav" in names and names.index("literate-nav") < at):
        raise PluginError(f"{config.config_file_path}: plugins: '{NAME}' must come after 'i18n' and before "
                          f"'literate-nav'; expected them in that order but received: {', '.join(names)}")


class Playbook(BasePlugin):
    """The shipped playbook's files, theme, assets and settings in a team's build."""

    def __init__(self) -> None:
        super().__init__()
        self.shipped: dict[str, str] = {}  # src_uri -> the package's file, for this build's added files

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        _order(config)
        docs = shipped_root() / "docs"
        overrides = str(docs / "overrides")
        if not any(_same(d, overrides) for d in config.theme.dirs if os.path.isdir(d)):
            config.theme.dirs.insert(1 if config.theme.custom_dir else 0, overrides)
        config.extra_css.extend(c for c in EXTRA_CSS if c not in map(str, config.extra_css))
        config.extra_javascript.extend(j for j in EXTRA_JAVASCRIPT if j not in map(str, config.extra_javascript))
        lines = [p.pattern for p in config.exclude_docs.patterns] if config.exclude_docs else []
        missing = [line for line in EXCLUDED if line not in lines]
        if missing:
            config.exclude_docs = GitIgnoreSpec.from_lines([*lines, *missing])
        self._extensions(config)
        return config

    def _extensions(self, config: MkDocsConfig) -> None:
        snippets = config.mdx_configs.get("pymdownx.snippets")
        if "pymdownx.snippets" not in config.markdown_extensions:  # mkdocs.yml left them to the plugin
            for name, options in MARKDOWN_EXTENSIONS:
                if name not in config.markdown_extensions:
                    config.markdown_extensions.append(name)
                if options and not config.mdx_configs.get(name):
                    config.mdx_configs[name] = dict(options)
            snippets = config.mdx_configs["pymdownx.snippets"]
            snippets["base_path"] = [config.docs_dir]
        bases = (snippets or {}).get("base_path", ["."])
        bases = [bases] if isinstance(bases, str) else list(bases)
        if snippets is not None and not any(_same(b, config.docs_dir) for b in bases):
            # the pages include what `tooling build` writes under the docs folder
            snippets["base_path"] = [*bases, config.docs_dir]

    @event_priority(50)  # before static-i18n (-100) sorts the files into editions
    def _add(self, files: Files, *, config: MkDocsConfig) -> Files:
        docs = shipped_root() / "docs"
        self.shipped = {}
        if _same(docs, config.docs_dir):
            return files
        added = []
        for relative in _shipped_pages(docs):
            if files.get_file_from_path(relative) is None and not _translation_of_own(relative, files):
                # as if in the team's docs folder, which static-i18n requires; pointed at the
                # package's file by _locate, once static-i18n has made its own copies
                added.append(File(relative, config.docs_dir, config.site_dir, config.use_directory_urls))
                self.shipped[added[-1].src_uri] = str(docs / relative)
                files.append(added[-1])
        set_exclusions(added, config)
        return files

    @event_priority(-100)  # after static-i18n's and before literate-nav's, by mkdocs.yml's order
    def _locate(self, files: Files, *, config: MkDocsConfig) -> Files:
        for file in files:
            path = self.shipped.get(file.src_uri)
            if path is not None and file.abs_src_path is not None and not os.path.exists(file.abs_src_path):
                file.abs_src_path = path
        return files

    on_files = CombinedEvent(_add, _locate)

    def on_pre_page(self, page: Page, *, config: MkDocsConfig, files: Files) -> Page:
        if page.file.src_uri in self.shipped:  # the package's page: no file of the team's to edit
            page.edit_url = None
        return page


def _shipped_pages(docs: Path) -> list[str]:
    """Every shipped file under ``docs`` that the plugin adds (relative, '/' separators)."""
    found = []
    for parent, dirs, names in os.walk(docs):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
        for name in sorted(names):
            relative = Path(os.path.relpath(os.path.join(parent, name), docs)).as_posix()
            if not name.startswith(".") and not relative.startswith(NOT_ADDED):
                found.append(relative)
    return found


def _translation_of_own(relative: str, files: Files) -> bool:
    """'playbook/about.ko.md' when the team has its own 'playbook/about.md': its page replaces
    the shipped one in every edition."""
    stem, dot, suffix = relative.removesuffix(".md").rpartition(".")
    return relative.endswith(".md") and bool(dot) and len(suffix) == 2 and \
        files.get_file_from_path(f"{stem}.md") is not None
