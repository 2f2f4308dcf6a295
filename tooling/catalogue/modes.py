"""The failure-mode catalogue, loaded once and checked like every record."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import jsonschema
import yaml

from tooling.records.load import parse_text  # the one YAML reader: located errors, safe types

FLAGS = re.IGNORECASE  # recognisers and keywords are matched without regard to case


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
    distinguish: tuple[str, ...] = ()
    generic: bool = False
    downstream: bool = False
    refines: str | None = None  # the coarser mode this one is a particular failure of


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
    return resources.files(package).joinpath(name).read_text("utf-8")


def check(entries: Any) -> list[str]:
    """Problems of a catalogue: its schema, unique ids, compiling patterns, known automations."""
    schema = json.loads(_text("failure-modes.schema.json", "tooling.schemas"))
    problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
                for e in jsonschema.Draft202012Validator(schema).iter_errors(entries)]
    if problems:
        return problems
    automations = {a["id"] for a in yaml.safe_load(_text("automations.yaml"))}
    seen: dict[str, str] = {}
    for entry in entries:
        if entry["id"] in seen:
            problems.append(f"{entry['id']}: the id is used twice")
        seen[entry["id"]] = entry["id"]
        if entry["automation"] not in automations:
            problems.append(f"{entry['id']}: automation {entry['automation']!r} is not in automations.yaml")
        problems += _refinement(entry, seen, entries)
        for pattern in [*entry.get("recognisers", []), *entry.get("keywords", [])]:
            try:
                re.compile(pattern, FLAGS)
            except re.error as exc:
                problems.append(f"{entry['id']}: pattern {pattern!r} does not compile: {exc}")
    for kind in ("xid", "errno", "exit_codes"):
        owners: dict[int, str] = {}
        for entry in entries:
            for code in entry.get(kind, []):
                if code in owners:
                    problems.append(f"{entry['id']}: {kind} {code} already belongs to {owners[code]}")
                owners[code] = entry["id"]
    return problems


def _refinement(entry: dict[str, Any], before: dict[str, str], entries: list[dict[str, Any]]) -> list[str]:
    """A mode refines one that exists and comes after it (specific before general, so no cycle)."""
    parent = entry.get("refines")
    if parent is None:
        return []
    if parent not in {e["id"] for e in entries}:
        return [f"{entry['id']}: refines {parent!r}, which is not in the catalogue"]
    if parent in before:
        return [f"{entry['id']}: refines {parent!r}, which must come after it (specific before general)"]
    return []


def _mode(entry: dict[str, Any]) -> FailureMode:
    tuples = {k: tuple(entry.get(k, ())) for k in ("xid", "errno", "exit_codes", "recognisers", "keywords", "distinguish")}
    plain = {k: v for k, v in entry.items() if k not in tuples}
    return FailureMode(**plain, **tuples)


@lru_cache(maxsize=1)
def catalogue() -> Catalogue:
    loaded = parse_text("tooling/catalogue/failure_modes.yaml", _text("failure_modes.yaml"))
    if loaded.findings:
        raise CatalogueError(f"the failure-mode catalogue is broken: {loaded.findings[0].format()}")
    entries = loaded.data
    problems = check(entries)
    if problems:
        raise CatalogueError("the failure-mode catalogue is broken: " + "; ".join(problems[:10]))
    return Catalogue(tuple(_mode(e) for e in entries))
