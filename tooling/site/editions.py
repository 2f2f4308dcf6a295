"""The site's language editions: the mkdocs plugin `playbook-editions` (mkdocs.yml).

mkdocs-static-i18n builds one edition per language in one `mkdocs build` (English at the root,
Korean under /ko/; `docs/X.ko.md` is the Korean page of `docs/X.md`, and a page without one
falls back to English). This plugin adds what it leaves to the site:

- Snippets follow the edition like pages do: in the Korean build, ``--8<-- "generated/P.md"``
  includes ``generated/P.ko.md`` where it exists, so a page that fell back to English (or a
  translated one) still shows the generated parts (run cards, "Paged?") in Korean.
- Each edition gets its own search index, configured for its own languages (option ``search``:
  English ``[en]``, Korean ``[ko, en]``, since records and error signatures stay in the
  language they were written in). static-i18n writes one index of both editions, searched with
  one configuration; here it is split after the last build, and the Korean pages ask for
  theirs (docs/overrides/main.html; tooling.site.edition_site).
- Templates get ``edition``: its locale, its folder in the site, and, on a page that fell back
  to the default language, the note to show above it (option ``untranslated``;
  docs/overrides/partials/content.html).
- The language menu's links to an edition's home are relative, like its links to other pages.
- A heading's permalink says "Permanent link" in the edition's language (option
  ``permalink_title``): the toc extension takes one title for the whole build.
- Under `tooling serve` (``mkdocs serve --dirty``), a build after the first makes only the pages
  an edit changed, and leaves the site a full build would (tooling.site.incremental), and the
  other plugins' work on every file is done again only where an edit changed it (tooling.site.reuse).
"""
from __future__ import annotations

import logging
import re
from html import escape
from pathlib import Path
from typing import Any

from mkdocs.config import config_options
from mkdocs.config.base import Config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page

from tooling.site import reuse
from tooling.site.edition_site import INDEX, edition_docs, edition_prefix, home_links, split_index
from tooling.site.incremental import Incremental
from tooling.site.kept import search_plugin

# A pymdownx.snippets line naming a markdown file: --8<-- "generated/paged.md"
# the toc extension's permalink on a heading: <a class="headerlink" href="#x" title="Permanent link">
_PERMALINK = re.compile(r'(<a class="headerlink" href="[^"]*" )title="Permanent link"')
_SNIPPET = re.compile(r'^(?P<lead>[ \t]*-{1,}8<-{1,}[ \t]+)"(?P<path>[^"\n]+?)(?:\.[a-z]{2})?\.md"', re.MULTILINE)


class EditionsConfig(Config):
    # lunr languages of each edition's search index, by locale
    search = config_options.Type(dict, default={})
    # the note above a page shown in the default language for want of a translation, by locale:
    # {title: ..., text: ...}
    untranslated = config_options.Type(dict, default={})
    # the title of a heading's permalink (the toc extension's "Permanent link"), by locale
    permalink_title = config_options.Type(dict, default={})


class Editions(BasePlugin[EditionsConfig]):
    """Snippets, search, the language menu and the template's ``edition`` per edition; see the
    module's docstring."""

    def __init__(self) -> None:
        super().__init__()
        # The edition of each build under way: static-i18n runs the other editions' builds inside
        # the default one's post_build, and leaves its own current language at the last of them.
        self.building: list[str] = []
        # Under `tooling serve`: what the last build left (an on_startup keeps this plugin, and
        # so this, from one build of mkdocs serve to the next)
        self.incremental: Incremental | None = None

    def on_startup(self, *, command: str, dirty: bool) -> None:
        logging.getLogger("mkdocs.structure.pages").addFilter(tag_anchor_reports)
        self.incremental = Incremental() if command == "serve" and dirty else None
        if self.incremental is not None:
            # mkdocs warns of every dirty build, and strict mode makes the warning an error:
            # this plugin makes a dirty build whole (tooling.site.incremental)
            logging.getLogger("mkdocs.commands.build").addFilter(_quiet_dirty)
            reuse.install()  # and the other plugins' work, done again only where an edit changed it

    def on_shutdown(self) -> None:
        self.incremental = None
        reuse.uninstall()

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        i18n = _i18n(config)
        for option in ("search", "untranslated", "permalink_title"):
            unknown = sorted(set(self.config[option]) - set(i18n.all_languages))
            if unknown:
                raise PluginError(f"playbook-editions: {option}: {', '.join(unknown)} is not a language of the "
                                  f"i18n plugin (expected one of {', '.join(i18n.all_languages)})")
        search = search_plugin(config)
        if self.incremental is not None and search is not None:
            search.is_dirty = False  # its own merging of a dirty build's index keeps one page: merged here instead
        return config

    def on_pre_build(self, *, config: MkDocsConfig) -> None:
        self.building.append(_i18n(config).current_language)

    @event_priority(-150)  # after static-i18n's (-100), which makes this edition's files
    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        if self.incremental is not None:
            self.incremental.files(files, config, _i18n(config).current_language)
        return files

    @event_priority(-150)
    def on_nav(self, nav: Navigation, *, config: MkDocsConfig, files: Files) -> Navigation:
        if self.incremental is not None:
            self.incremental.nav(nav, _i18n(config).current_language)
        return nav

    def on_pre_page(self, page: Page, *, config: MkDocsConfig, files: Files) -> Page:
        if self.incremental is not None:
            self.incremental.reading(page, _i18n(config).current_language)
        return page

    def on_page_markdown(self, markdown: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
        i18n = _i18n(config)
        docs = Path(config.docs_dir)
        markdown = _SNIPPET.sub(lambda m: _localized(m, docs, i18n.current_language, i18n.default_language), markdown)
        if self.incremental is not None:
            bases = config.mdx_configs.get("pymdownx.snippets", {}).get("base_path", ["."])
            self.incremental.read(page, markdown, i18n.current_language, [bases] if isinstance(bases, str) else bases)
        return markdown

    def on_page_content(self, html: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
        title = self.config.permalink_title.get(_i18n(config).current_language)
        return _PERMALINK.sub(lambda m: f'{m[1]}title="{escape(title)}"', html) if title else html

    def on_page_context(self, context: dict[str, Any], *, page: Page, config: MkDocsConfig, nav: Any) -> dict[str, Any]:
        """Runs after static-i18n's (priority 50), which points the language menu at this page's
        translations, and at an edition's home with an absolute link ('/ko/', which would miss a
        site published under a path, such as a mike version): those become relative too."""
        i18n = _i18n(config)
        homes = home_links(i18n, config)
        # an attribute, not the item: static-i18n sets it so, and templates read it first
        for alternate in getattr(config.extra, "alternate", None) or []:
            home = homes.get(alternate.get("lang"))
            if home is not None and alternate.get("link") == home[0]:
                alternate["link"] = home[1]
        locale, source = i18n.current_language, getattr(page.file, "locale", i18n.current_language)
        context["edition"] = {"locale": locale, "prefix": edition_prefix(locale, i18n.default_language),
                              "source_locale": source,  # the language of the file shown
                              "untranslated": self.config.untranslated.get(locale) if source != locale else None}
        return context

    def on_pre_template(self, template: Any, *, template_name: str, config: MkDocsConfig) -> Any:
        """The 404 page is no translation of another: its language menu leads to each edition's
        home (static-i18n leaves it the links of whichever page was built last)."""
        if template_name == "404.html":
            homes = home_links(_i18n(config), config)
            for alternate in getattr(config.extra, "alternate", None) or []:
                if alternate.get("lang") in homes:
                    alternate["link"] = homes[alternate["lang"]][0]
        return template

    @event_priority(110)  # before material's tags plugin (100) makes its listings from every page
    def on_env(self, env: Any, *, config: MkDocsConfig, files: Files) -> Any:
        if self.incremental is not None:
            env.bytecode_cache = self.incremental.compiled
            self.incremental.env(config, _i18n(config).current_language)
        return env

    def on_post_page(self, output: str, *, page: Page, config: MkDocsConfig) -> str:
        if self.incremental is not None:
            self.incremental.built(page, _i18n(config).current_language)
        return output

    @event_priority(-200)  # after static-i18n (-100), which builds the other editions in its own post_build
    def on_post_build(self, *, config: MkDocsConfig) -> None:
        i18n = _i18n(config)
        locale = self.building.pop()
        lang = self.config.search.get(locale)
        search = search_plugin(config)
        if self.incremental is None:
            split_index(Path(config.site_dir), locale=locale, default=i18n.default_language,
                        editions=i18n.build_languages, lang=lang)
            return
        # the index of a dirty build holds the pages it made alone: merged with the others' here
        docs = edition_docs(search.search_index.entries, locale=locale, default=i18n.default_language,
                            editions=i18n.build_languages) if search is not None else []
        settings = {key: search.config[key] for key in ("lang", "separator", "pipeline", "fields")} if search else None
        self.incremental.post_build(config, locale, docs, settings and {**settings, **({"lang": lang} if lang else {})},
                                    str(Path(config.site_dir) / edition_prefix(locale, i18n.default_language) / INDEX))

    def on_build_error(self, *, error: Exception) -> None:
        self.building.clear()
        if self.incremental is not None:
            self.incremental.forget()


def _i18n(config: MkDocsConfig) -> Any:
    plugin = config.plugins.get("i18n")
    if plugin is None:
        raise PluginError("playbook-editions needs the i18n plugin (mkdocs-static-i18n) in mkdocs.yml")
    return plugin


def _localized(match: re.Match[str], docs: Path, locale: str, default: str) -> str:
    """The snippet line for this edition: P.<locale>.md where it exists, else P.md."""
    path = match["path"]
    if locale != default and (docs / f"{path}.{locale}.md").is_file():
        return f'{match["lead"]}"{path}.{locale}.md"'
    return f'{match["lead"]}"{path}.md"'


def _quiet_dirty(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("A 'dirty' build is being performed")


# mkdocs checks a link's anchor against the headings of the page's markdown, and Material's tags
# plugin writes the tags page's listing (and the ids of its tags) after that: every link of a
# record to its tag was reported missing, 72 lines an edition under `tooling serve`
_TAG_ANCHOR = re.compile(r"contains a link '[^']*#tag:[^']*', but the doc '(?:[^']*/)?tags(?:\.\w+)?\.md' "
                         r"does not contain an anchor '#tag:")


def tag_anchor_reports(record: logging.LogRecord) -> bool:
    """False for mkdocs' report of a tag's anchor missing from the tags page (a log filter)."""
    return not _TAG_ANCHOR.search(record.getMessage())
