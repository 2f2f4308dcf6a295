"""The builds of `tooling serve` after its first: only the pages an edit changed are made again,
and the site left is the one a full build would write.

mkdocs' own dirty build (`mkdocs serve --dirty`) skips each page whose source is older than its
output, and leaves what it skipped out of everything made from all pages: the search index then
holds the rebuilt pages alone, the tags page lists their tags alone, a page titled by its own
heading is untitled in the others' navigation, and a snippet's change reaches no page that
includes it. Here each page's state after a build (markdown, meta, HTML, contents, anchors,
search entries) is kept and given back to the pages a build skips, so that whatever is made
from all pages is made as a full build makes it. A page is made again when:

- its source or a snippet it includes (``--8<--``) changed since it was read (tooling.site.staleness);
- the navigation changed (a page added, removed or renamed in it), or mkdocs.yml or the theme's
  overrides changed, or a rebuilt page's title or a field the navigation shows changed: every
  page then, since every page carries the navigation;
- the tags of a rebuilt page changed: the pages listing tags (``<!-- material/tags -->``) too.

State is kept per edition: mkdocs-static-i18n builds each in a build of its own. The plugin
``playbook-editions`` (tooling.site.editions) calls this in `tooling serve` alone.
"""
from __future__ import annotations

import gc
import json
import os
from dataclasses import dataclass, field
from typing import Any

import jinja2
import jinja2.bccache
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files, InclusionLevel
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page

from tooling.site.kept import (TAGS_PLUGINS, PageState, Stamp, chrome, export_tags, keep, populate, restore,
                               search_plugin, stamp, tags_of, tags_plugin, tell_tags)
from tooling.site.staleness import changed, config_stamp, nav_signature, read_from

@dataclass
class Edition:
    config: Stamp
    nav: str
    pages: dict[str, PageState] = field(default_factory=dict)


@dataclass
class Round:
    """One edition's build under way."""

    edition: Edition | None
    files: Files
    uris: list[str]
    modified: set[str]
    full: bool
    nav: str = ""
    # by src_uri: (source stamp, snippets stamp, volatile, a tags listing's markdown)
    read: dict[str, tuple[Stamp, Stamp, bool, str | None]] = field(default_factory=dict)
    built: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        # by src_uri (static-i18n's Files finds a file by parsing its path anew each time)
        pages = self.files.documentation_pages(inclusion=InclusionLevel.is_in_serve)
        self.by_uri = {file.src_uri: file for file in pages}

    def present(self) -> None:
        """The pages this build has (a draft is left out of an edition built without a server)."""
        self.uris = [uri for uri in self.uris if self.by_uri[uri].page is not None]

    def page(self, uri: str) -> Page:
        page = self.by_uri[uri].page
        assert page is not None, "every page of the build has its Page by now"
        return page


class Compiled(jinja2.BytecodeCache):
    """The theme's templates as an earlier build compiled them: mkdocs makes a new environment
    for each build, which compiled every template again (a second of each build). A template
    whose source changed is compiled anew (jinja checks each against its source)."""

    def __init__(self) -> None:
        self.code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self.code:
            bucket.bytecode_from_string(self.code[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.code[bucket.key] = bucket.bytecode_to_string()


class Incremental:
    """The state of `tooling serve`'s builds, by site folder and edition."""

    def __init__(self) -> None:
        self.editions: dict[tuple[str, str], Edition] = {}
        self.rounds: dict[str, Round] = {}
        self.compiled = Compiled()
        self.frozen = False  # the first build's objects are out of the cyclic collector's way

    def forget(self) -> None:
        """After a failed build: the next one makes every page."""
        self.editions.clear()
        self.rounds.clear()

    def files(self, files: Files, config: MkDocsConfig, locale: str) -> None:
        """Decide which pages this build makes; mkdocs asks each page's file (is_modified)."""
        edition = self.editions.get((config.site_dir, locale))
        pages = files.documentation_pages(inclusion=InclusionLevel.is_in_serve)
        uris = [f.src_uri for f in pages]
        # a plugin whose state of every page this cannot give back: every page made, every time
        unknown = ((TAGS_PLUGINS & set(config.plugins) and tags_plugin(config) is None)
                   or ({"search", "material/search"} & set(config.plugins) and search_plugin(config) is None))
        full = (edition is None or bool(unknown) or edition.config != config_stamp(config)
                or list(edition.pages) != uris)
        modified = set(uris) if full else {f.src_uri for f in pages if changed(f, edition.pages[f.src_uri])}
        self.rounds[locale] = Round(edition, files, uris, modified, full)
        for file in pages:
            file.is_modified = (lambda uri=file.src_uri, made=modified: uri in made)  # type: ignore[method-assign]

    def nav(self, nav: Navigation, locale: str) -> None:
        now = self.rounds[locale]
        now.nav = nav_signature(nav)
        if now.edition is None or now.edition.nav != now.nav:
            now.full = True
            now.modified.update(now.uris)

    def reading(self, page: Page, locale: str) -> None:
        """Before a page's source is read: its stamp, so that a change while it is built is seen next time."""
        self.rounds[locale].read[page.file.src_uri] = (stamp([page.file.abs_src_path]), (), False, None)

    def read(self, page: Page, markdown: str, locale: str, bases: list[str]) -> None:
        """Once the snippets' names are final: the files the page includes, stamped."""
        now = self.rounds[locale]
        now.read[page.file.src_uri] = (now.read[page.file.src_uri][0], *read_from(markdown, bases))

    def built(self, page: Page, locale: str) -> None:
        self.rounds[locale].built.add(page.file.src_uri)

    def env(self, config: MkDocsConfig, locale: str) -> None:
        """After mkdocs read the changed pages, before anything is made from all pages: give the
        others back their state, and widen the build where the changes reach other pages."""
        now = self.rounds[locale]
        now.present()
        tags = tags_plugin(config)
        if now.full or now.edition is None:
            export_tags(tags, True)
            return
        kept = now.edition.pages
        changed = [now.page(uri) for uri in now.modified]
        retitled = any(chrome(page) != kept[page.file.src_uri].chrome for page in changed)
        if retitled:
            now.modified.update(now.uris)  # every page carries the navigation: made again, from its state
        retagged = any(tags_of(page.meta) != tags_of(kept[page.file.src_uri].meta) for page in changed)
        if retagged:
            listings = [uri for uri, state in kept.items() if state.listing_source is not None]
            for uri in listings:
                if now.page(uri).markdown is None:
                    populate(now.page(uri), config, now.files)
            now.modified.update(listings)
        for uri in now.uris:
            if now.page(uri).markdown is None:
                restore(now.page(uri), kept[uri], now.by_uri)
        if tags is not None:
            skipped = {uri: kept[uri] for uri in now.uris if uri not in now.read}
            tell_tags(tags, [now.page(uri) for uri in now.uris], skipped)
            # the pages' titles, addresses and tags as the last build of this edition exported them
            export_tags(tags, retitled or retagged)

    def post_build(self, config: MkDocsConfig, locale: str, docs: list[dict[str, Any]],
                   search: dict[str, Any] | None, index: str) -> None:
        """Keep this build's pages, remove the outputs of pages gone, and write the edition's
        search index at ``index`` (``docs``: this build's entries of the edition; ``search``:
        the index's configuration, None where search is off)."""
        now = self.rounds.pop(locale)
        now.present()
        entries: dict[str, list[str]] = {}
        for doc in docs:
            entries.setdefault(doc["location"].split("#")[0], []).append(
                json.dumps(doc, separators=(",", ":"), default=str))
        old = now.edition.pages if now.edition else {}
        pages: dict[str, PageState] = {}
        for uri in now.uris:
            page = now.page(uri)
            pages[uri] = keep(page, now.read[uri]) if uri in now.read else old[uri]
            if uri in now.built:
                pages[uri].search = ",".join(entries.get(page.url, []))
        for uri in set(old) - set(pages):
            _remove(old[uri].dest)
        self.editions[(config.site_dir, locale)] = Edition(config_stamp(config), now.nav, pages)
        if search is not None:
            _write(index, '{"config":' + json.dumps(search, separators=(",", ":")) + ',"docs":['
                   + ",".join(s.search for s in pages.values() if s.search) + "]}")
        if not self.rounds and not self.frozen:
            self.frozen = True
            # The first build's pages, kept for all the builds after it, are most of what this
            # process holds: Python's collector went through all of them again at each build (a
            # fifth of one at 1,000 incidents). Frozen, it goes through what builds make anew.
            gc.collect()
            gc.freeze()


def _remove(path: str) -> None:
    try:
        os.remove(path)
        os.rmdir(os.path.dirname(path))  # the folder of a page of its own, when nothing else is in it
    except OSError:
        pass


def _write(path: str, text: str) -> None:
    from mkdocs.utils import write_file

    write_file(text.encode("utf-8"), path)
