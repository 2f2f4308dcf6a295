"""What tells the failures of one mode apart where its line reads the same whatever caused them: the kinds an
incident tells by its lines and its own words, read from ``distinguish.yaml`` beside this module.

A collective timeout, a loss of exactly zero, a requeue after a time limit, an I/O error: each prints the same line
whatever was behind it, and the remedies differ. A person's words say which (the file's header says how each kind is
written, each kind says why it is a failure of its own). A mode whose catalogue entry names a kind in
``distinguish:`` groups its incidents by it: repeat grouping's key (:mod:`tooling.analysis.identity`) gets
``key=kind`` for each kind the incident tells. The file holds the patterns as data beside the lines each must and
must not tell (tests/test_distinguish.py reads them), as the catalogue's recognisers are.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from tooling.catalogue.checks import text
from tooling.catalogue.evidence import description
from tooling.catalogue.modes import CatalogueError
from tooling.records.load import parse_text  # the one YAML reader

FILE = "tooling/catalogue/distinguish.yaml"
FIELDS = {"key", "why", "unless", "case", "says", "in_lines", "in_words", "tells", "not"}
READS = ("says", "in_lines", "in_words")  # lines and words; the verbatim lines alone; the words alone
_FRAGMENT = re.compile(r"\{([A-Z_]+)\}")


@dataclass(frozen=True)
class Kind:
    id: str
    key: str  # the key's name in a repeat's identity ("zeroed-by=half-precision")
    why: str
    reads: tuple[tuple[str, re.Pattern[str]], ...]  # (where, pattern): READS
    unless: str | None  # a kind whose words explain this one's: then the incident tells that one
    tells: tuple[str, ...]  # texts that must tell it
    never: tuple[str, ...]  # texts that must not

    def said(self, data: dict[str, Any]) -> bool:
        """Whether an incident says this kind, whatever the kind that explains it says."""
        for where, pattern in self.reads:
            if where != "in_words" and any(pattern.search(str(line)) for line in data.get("signatures", [])):
                return True
            if where != "in_lines" and pattern.search(description(data)) is not None:
                return True
        return False


@lru_cache(maxsize=1)
def kinds() -> dict[str, Kind]:
    """Kind id -> its kind, in the file's order (the order of a key's parts)."""
    loaded = parse_text(FILE, text("distinguish.yaml"))
    if loaded.findings:
        raise CatalogueError(f"the distinguishing kinds are broken: {loaded.findings[0].format()}")
    data = loaded.data or {}
    fragments = {str(k): str(v) for k, v in (data.get("fragments") or {}).items()}
    found = {str(kind): _kind(str(kind), entry, fragments) for kind, entry in (data.get("kinds") or {}).items()}
    for kind in found.values():
        if kind.unless is not None and kind.unless not in found:
            raise CatalogueError(f"{FILE}: kinds/{kind.id}/unless: no kind {kind.unless!r}; expected one of: "
                                 f"{sorted(found)}")
    return found


def _kind(kind: str, entry: Any, fragments: dict[str, str]) -> Kind:
    where = f"{FILE}: kinds/{kind}"
    if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
        raise CatalogueError(f"{where}: expected a mapping with a key")
    unknown = sorted(set(entry) - FIELDS)
    if unknown:
        raise CatalogueError(f"{where}: unknown field {unknown[0]!r}; expected one of: {sorted(FIELDS)}")
    flags = 0 if entry.get("case") == "sensitive" else re.IGNORECASE
    reads = tuple((read, _compiled(f"{where}/{read}", entry[read], fragments, flags)) for read in READS if read in entry)
    if not reads:
        raise CatalogueError(f"{where}: reads nothing; expected one of: {list(READS)}")
    return Kind(kind, entry["key"], str(entry.get("why", "")), reads, entry.get("unless"),
                tuple(map(str, entry.get("tells", []))), tuple(map(str, entry.get("not", []))))


def _compiled(where: str, alternatives: Any, fragments: dict[str, str], flags: int) -> re.Pattern[str]:
    """One pattern of a kind's alternatives, each fragment ``{NAME}`` written out."""
    if not isinstance(alternatives, list) or not alternatives:
        raise CatalogueError(f"{where}: expected a list of patterns")

    def fragment(found: re.Match[str]) -> str:
        if found.group(1) not in fragments:
            raise CatalogueError(f"{where}: no fragment {found.group(1)!r}; expected one of: {sorted(fragments)}")
        return fragments[found.group(1)]
    pattern = "|".join(_FRAGMENT.sub(fragment, str(a)) for a in alternatives)
    try:
        return re.compile(pattern, flags)
    except re.error as error:
        raise CatalogueError(f"{where}: the pattern does not compile: {error}") from None


def told(kind: str) -> Callable[[dict[str, Any]], bool]:
    """The test that an incident tells ``kind``: it says it, and not a kind that explains it."""
    own = kinds()[kind]
    other = kinds()[own.unless] if own.unless is not None else None
    return lambda data: own.said(data) and not (other is not None and other.said(data))


@lru_cache(maxsize=1)
def told_by_words() -> dict[str, tuple[str, Callable[[dict[str, Any]], bool]]]:
    """Kind -> (the key's name, the test), in the file's order."""
    return {kind.id: (kind.key, told(kind.id)) for kind in kinds().values()}
