"""Where an edition lives in the built site: its folder, the links to its home, its own search index.

The default language's edition is at the site's root, another under its locale (``ko/``); the
links to an edition's home are relative to the site root, like the links to its other pages, so
that a site published under a path (a mike version) still finds them.

mkdocs-static-i18n writes one search index of both editions, searched with one configuration.
The plugin ``playbook-editions`` (tooling.site.editions) splits it after the last build: each
edition gets the entries of its own pages, searched in its own languages (English ``[en]``,
Korean ``[ko, en]``, since records and error signatures stay in the language they were written
in), and the Korean pages ask for theirs (docs/overrides/main.html). Under `tooling serve` the
index of a dirty build is merged with the pages it skipped instead (tooling.site.incremental),
from the same entries.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.utils import write_file

INDEX = "search/search_index.json"  # where mkdocs-material writes and reads the index


def edition_prefix(locale: str, default: str) -> str:
    """Where an edition lives in the site: '' for the default language, 'ko/' for Korean."""
    return "" if locale == default else f"{locale}/"


def home_links(i18n: Any, config: MkDocsConfig) -> dict[str, tuple[str, str]]:
    """{locale: (the absolute link static-i18n gives the edition's home, the same relative to
    the site root)}."""
    base = urlsplit(config.site_url).path.rstrip("/") if config.site_url else ""
    return {lang.locale: (lang.fixed_link or f"{base}{lang.link}", edition_prefix(lang.locale, i18n.default_language) or "./")
            for lang in i18n.config.languages}


def split_index(site: Path, *, locale: str, default: str, editions: list[str], lang: list[str] | None) -> None:
    """Write this edition's own index (``site/<prefix>search/search_index.json``) from the one
    mkdocs-material last wrote at the root: the entries of this edition's pages, searched in
    ``lang``. Locations stay relative to the site root, as the theme resolves them."""
    shared = site / INDEX
    if not shared.is_file():  # search is switched off
        return
    index = json.loads(shared.read_text(encoding="utf-8"))
    docs = edition_docs(index["docs"], locale=locale, default=default, editions=editions)
    config = {**index["config"], **({"lang": lang} if lang else {})}
    write_file(json.dumps({"config": config, "docs": docs}, separators=(",", ":")).encode("utf-8"),
               str(site / edition_prefix(locale, default) / INDEX))


def edition_docs(docs: list[dict[str, Any]], *, locale: str, default: str, editions: list[str]) -> list[dict[str, Any]]:
    """The search entries of one edition's pages: under its folder, or, for the default edition
    at the root, under no other edition's."""
    prefix = edition_prefix(locale, default)
    if prefix:
        return [d for d in docs if d["location"].startswith(prefix)]
    others = tuple(edition_prefix(e, default) for e in editions if e not in (locale, default))
    return [d for d in docs if not d["location"].startswith(others)]
