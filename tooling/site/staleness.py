"""When a page `tooling serve` made is stale: what it was made from, stamped when it was read.

A page is made again when its source or a snippet it includes (``--8<--``) changed since it was
read, or always when it includes a block of snippet names (not followed); every page is made again
when mkdocs.yml or the theme's overrides changed, or the navigation every page carries. The
stamps themselves (a file's time, size and inode) and what a page keeps are
:mod:`tooling.site.kept`; deciding what a build makes is :mod:`tooling.site.incremental`.
"""
from __future__ import annotations

import os
import re
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page

from tooling.site.kept import PageState, Stamp, stamp

# A line including a snippet: --8<-- "generated/paged.md" (a line range may follow the name).
_SNIPPET = re.compile(r"^[ \t]*-+8<-+[ \t]+([\"'])(?P<path>[^\"'\n]+)\1", re.M)
_SNIPPET_BLOCK = re.compile(r"^[ \t]*-+8<-+[ \t]*$", re.M)  # a block of names: not followed, always rebuilt
_LISTING = re.compile(r"<!--\s*?material/tags", re.I)


def read_from(markdown: str, bases: list[str]) -> tuple[Stamp, bool, str | None]:
    """What a page's markdown (its snippets' names final) includes: the files it names under each
    snippet base, stamped; whether it includes a block of names (volatile: made every time); and
    the markdown itself where it is a tags listing (``<!-- material/tags -->``), else None."""
    names = [m["path"] for m in _SNIPPET.finditer(markdown)]
    included = stamp(os.path.join(base, _without_lines(name)) for name in names for base in bases)
    listing = markdown if _LISTING.search(markdown) else None
    return included, bool(_SNIPPET_BLOCK.search(markdown)), listing


def changed(file: File, state: PageState) -> bool:
    """Whether the page of ``file`` is stale: its source or a snippet it includes changed since
    ``state`` was kept, or it is volatile."""
    return (state.volatile or stamp([file.abs_src_path]) != state.source
            or stamp(p for p, *_ in state.snippets) != state.snippets)


def _without_lines(name: str) -> str:
    """A snippet's file: "notes.md:3:9" includes lines 3 to 9 of notes.md."""
    return re.sub(r":-?\d.*$", "", name)


def config_stamp(config: MkDocsConfig) -> Stamp:
    """mkdocs.yml and the theme's overrides: a change to either changes every page."""
    paths = [config.config_file_path] if config.config_file_path else []
    custom = config.theme.custom_dir
    if custom and os.path.isdir(custom):
        paths += sorted(os.path.join(d, name) for d, _, names in os.walk(custom) for name in names)
    return stamp(paths)


def nav_signature(nav: Navigation) -> str:
    """The navigation as every page shows it: kinds, titles given in it, links, in order."""
    def item(entry: Any) -> Any:
        title = vars(entry).get("title") if isinstance(entry, Page) else entry.title
        children = [item(child) for child in entry.children or []]
        return type(entry).__name__, title, getattr(entry, "url", None), children
    return repr([item(entry) for entry in nav.items])
