"""The failure-mode catalogue, loaded once and checked like every record."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from tooling.catalogue import local
from tooling.catalogue.checks import FLAGS, check, local_entries, raise_first, shipped_problems, text
from tooling.records.load import parse_text  # the one YAML reader: located errors, safe types

__all__ = ["FLAGS", "Catalogue", "CatalogueError", "FailureMode", "catalogue", "check"]


@dataclass(frozen=True)
class FailureMode:
    id: str
    title: str
    layer: str
    symptom: str
    summary: str
    automation: str
    playbook: str
    category: str | None = None
    xid: tuple[int, ...] = ()
    errno: tuple[int, ...] = ()
    exit_codes: tuple[int, ...] = ()
    recognisers: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    routine: tuple[str, ...] = ()  # what the failure can follow but recovers on its own: no evidence of it alone
    distinguish: tuple[str, ...] = ()
    generic: bool = False
    downstream: bool = False
    ends_attempt: bool = False  # a scheduler's stop: nothing after it is the aftermath of what came before
    refines: str | None = None  # the coarser mode this one is a particular failure of
    # the mode its failure is when the incident names a phase of a run under way (preparing the data,
    # saving): the ranks had met, so a store that timed out then was a wait on a busy peer, not a rendezvous
    after_start: str | None = None
    # failures this one is how they end (a divergence ends in NaN): an incident whose description
    # names one of them was that failure, this one its last line
    end_of: tuple[str, ...] = ()


@dataclass(frozen=True)
class Catalogue:
    modes: tuple[FailureMode, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_id", {m.id: m for m in self.modes})
        object.__setattr__(self, "_ranks", {m.id: n for n, m in enumerate(self.modes)})
        object.__setattr__(self, "_refined", frozenset(m.refines for m in self.modes if m.refines))

    def get(self, mode_id: str) -> FailureMode | None:
        return self.by_id.get(mode_id)  # type: ignore[attr-defined]

    def ids(self) -> list[str]:
        return [m.id for m in self.modes]

    def rank(self, mode: FailureMode) -> int:
        """Its place in the catalogue: earlier entries are more specific and win ties."""
        return self._ranks[mode.id]  # type: ignore[attr-defined]

    def narrows(self, mode: FailureMode, coarser: FailureMode) -> bool:
        """Whether ``mode`` is a particular failure of ``coarser`` (``refines``, at any depth)."""
        parent = mode.refines
        while parent is not None:
            if parent == coarser.id:
                return True
            parent = self.by_id[parent].refines  # type: ignore[attr-defined]
        return False

    def narrowest(self, mode: FailureMode, candidates: list[FailureMode]) -> FailureMode:
        """The most particular of ``candidates`` that narrows ``mode``; ``mode`` if none does."""
        for candidate in candidates:
            if self.narrows(candidate, mode):
                mode = candidate
        return mode

    @property
    def refined(self) -> frozenset[str]:
        """Ids of the modes some other mode narrows: only they need a look for a narrower one."""
        return self._refined  # type: ignore[attr-defined]


class CatalogueError(ValueError):
    """The shipped catalogue is broken: a bug in the package, found by its tests."""


def _text(name: str, package: str = "tooling.catalogue") -> str:
    return text(name, package)


def _mode(entry: dict[str, Any]) -> FailureMode:
    tuples = {k: tuple(entry.get(k, ())) for k in ("xid", "errno", "exit_codes", "recognisers", "keywords", "routine",
                                                       "distinguish", "end_of")}
    plain = {k: v for k, v in entry.items() if k not in tuples}
    return FailureMode(**plain, **tuples)


def catalogue() -> Catalogue:
    """The failure modes: the shipped catalogue, merged with the local one of the repository
    named by :func:`tooling.catalogue.local.repository` (a broken local one: a located UserError)."""
    return _merged(local.refresh(recent=True))


@lru_cache(maxsize=1)
def shipped_entries() -> list[dict[str, Any]]:
    source = _text("failure_modes.yaml")
    loaded = parse_text("tooling/catalogue/failure_modes.yaml", source)
    if loaded.findings:
        raise CatalogueError(f"the failure-mode catalogue is broken: {loaded.findings[0].format()}")
    problems = shipped_problems(loaded.data, source)
    if problems:
        raise CatalogueError("the failure-mode catalogue is broken: " + "; ".join(problems[:10]))
    return loaded.data


@lru_cache(maxsize=4)
def _merged(current: tuple[str, int, int] | None) -> Catalogue:
    entries = shipped_entries()
    if current is not None:
        entries, found = local_entries(current[0], entries)
        raise_first(found)
    return Catalogue(tuple(_mode(e) for e in entries))
