"""What a build of `tooling serve` keeps of each page, and gives back to the pages the next build
skips (tooling.site.incremental): all that other pages, the search index and the tags plugin
take from a page once mkdocs has read it."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

Stamp = tuple[tuple[str, int, int, int] | tuple[str, None], ...]
NAV_META = ("icon", "subtitle", "status")  # what material's navigation shows of a page's meta
TAGS_PLUGINS = {"material/tags", "tags"}


def stamp(paths: Iterable[str]) -> Stamp:
    """What a file looked like when read: a change to any of them makes the page again."""
    found: list[Any] = []
    for path in paths:
        try:
            stat = os.stat(path)
            found.append((path, stat.st_mtime_ns, stat.st_size, stat.st_ino))
        except OSError:
            found.append((path, None))
    return tuple(found)


@dataclass
class PageState:
    """One page as its last build left it."""

    source: Stamp  # its file, stamped before it was read
    snippets: Stamp  # the files it includes (--8<--)
    volatile: bool  # it includes a block of snippets, not followed: made every time
    markdown: str  # after every plugin's hook, as rendered
    listing_source: str | None  # a tags listing's markdown before the tags plugin replaced its directive
    meta: dict[str, Any]
    content: str
    toc: Any
    title_from_render: str | None
    anchors: set[str] | None
    links: dict[str, dict[str, str]]  # links to anchors, by the linked page's src_uri
    chrome: tuple[Any, ...]  # what other pages show of it
    dest: str
    search: str = ""  # its search entries, serialised


def chrome(page: Page) -> tuple[Any, ...]:
    return (page.title, *(page.meta.get(key) for key in NAV_META))


def tags_of(meta: dict[str, Any]) -> Any:
    return meta.get("tags")


def tags_plugin(config: MkDocsConfig) -> Any:
    """Material's tags plugin, where it keeps what it learnt as this module knows (9.6 and later)."""
    plugin = next((config.plugins[name] for name in TAGS_PLUGINS if name in config.plugins), None)
    known = all(hasattr(getattr(plugin, part, None), "add") for part in ("mappings", "listings"))
    return plugin if known and hasattr(plugin.mappings, "data") else None


def search_plugin(config: MkDocsConfig) -> Any:
    """Material's search plugin, where it keeps its entries as this module knows."""
    plugin = config.plugins.get("material/search")
    return plugin if plugin is not None and hasattr(getattr(plugin, "search_index", None), "entries") else None


def populate(page: Page, config: MkDocsConfig, files: Files) -> None:
    """Read and render a page mkdocs skipped, as its build does (its one function for it)."""
    from mkdocs.commands.build import _populate_page

    _populate_page(page, config, files, dirty=False)


def restore(page: Page, state: PageState, files: dict[str, File]) -> None:
    """A page skipped by this build, as its last build left it (``files``: this build's, by src_uri)."""
    page.markdown, page.meta, page.content, page.toc = state.markdown, dict(state.meta), state.content, state.toc
    page._title_from_render = state.title_from_render
    page.present_anchor_ids = state.anchors
    page.links_to_anchors = {files[uri]: links for uri, links in state.links.items() if uri in files}


def tell_tags(tags: Any, pages: list[Page], skipped: dict[str, PageState]) -> None:
    """The tags plugin learns each page's tags while reading it: told again here, of every page
    in the order of a full build, with the listing of each skipped page that lists tags."""
    tags.mappings.data.clear()
    for page in pages:
        if not tags.filter(page.file):
            continue
        tags.mappings.add(page, page.markdown or "")
        state = skipped.get(page.file.src_uri)
        if state is not None and state.listing_source is not None:
            tags.listings.add(page, state.listing_source)


def export_tags(tags: Any, needed: bool) -> None:
    """Whether this edition's build writes the tags plugin's export of every page's tags
    (tags.json): not when no page's title, address or tags changed since its last build, whose
    file is the one this build would write. Decided at each edition's build: they share the plugin."""
    if tags is None:
        return
    configured = tags.__dict__.setdefault("_configured_export", tags.config.export)
    tags.config.export = configured and needed


def keep(page: Page, read: tuple[Stamp, Stamp, bool, str | None]) -> PageState:
    """A page this build read: ``read`` is its stamps, whether it is made every time, and its
    markdown before the tags plugin's hook where it lists tags."""
    source, snippets, volatile, listing = read
    links = {file.src_uri: dict(found) for file, found in (page.links_to_anchors or {}).items()}
    return PageState(source, snippets, volatile, page.markdown or "", listing, dict(page.meta), page.content or "",
                     page.toc, page._title_from_render, page.present_anchor_ids, links, chrome(page),
                     page.file.abs_dest_path)
