"""Filing what a watch finds: one incident per failure, or one more occurrence of its open incident.

The same failure is what ``tooling repeats`` calls the same
(:func:`tooling.analysis.identity.identify_data`: the failure mode with the codes that tell its
failures apart), hitting the same run (or cluster); where that identity has no key (a catch-all
such as a hang, which names no error line) the failure mode stands for it. An incident is open
until it is resolved. Occurrences are added through the locked, compare-and-swap edit of
``tooling set`` (:func:`tooling.records.edit.rewrite`), so a person editing the same incident
loses nothing, and an incident resolved meanwhile gets no occurrence: a new incident is filed.
New incidents are filed all or none (:func:`tooling.failures.filing.file_all`).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from tooling.analysis.identity import identify_data
from tooling.analysis.incidents import where_of
from tooling.failures.filing import file_all
from tooling.records import roundtrip
from tooling.records.edit import edited_text, rewrite
from tooling.records.model import Record
from tooling.records.validate import repository_records

Key = tuple[str, ...]


@dataclass(frozen=True)
class Found:
    """One failure found in a poll: its incident's fields, how many times it happened, its JSON."""
    values: dict[str, Any]  # keyword arguments of tooling.scaffold.new.new_incident
    occurrences: int
    details: dict[str, Any]


@dataclass(frozen=True)
class Outcome:
    action: str  # "created" or "occurrence"
    path: Path
    added: int  # occurrences this poll
    occurrences: int  # in all
    details: dict[str, Any]

    @property
    def incident(self) -> str:
        return self.path.stem


class _Resolved(Exception):
    """The incident was resolved since it was read: the failure is a new incident."""


def failure_key(data: dict[str, Any]) -> Key | None:
    """Which failure an incident (or an incident about to be filed) is, and where it hit."""
    try:
        identity = identify_data(data)
    except (TypeError, AttributeError, ValueError):  # a record too broken to say
        return None
    if identity.key is not None:
        return (where_of(data), *identity.key)
    mode = data.get("failure_mode")
    return (where_of(data), "mode", str(mode)) if mode else None


def _fields(values: dict[str, Any]) -> dict[str, Any]:
    """An incident's fields from new_incident's keyword arguments."""
    return {**{k: v for k, v in values.items() if k != "extra"}, **values.get("extra", {})}


def open_incidents(universe: list[Record]) -> dict[Key, Record]:
    """The newest open incident of each failure."""
    found: dict[Key, Record] = {}
    for record in sorted((r for r in universe if r.kind == "incident"), key=_number):
        if record.get("status") != "resolved" and (key := failure_key(record.data)) is not None:
            found[key] = record
    return found


def _number(record: Record) -> int:
    digits = record.id.rpartition("-")[2]
    return int(digits) if digits.isdigit() else -1


def file_found(found: list[Found], *, root: Path, now: datetime) -> list[Outcome]:
    """File each failure as a new incident or as occurrences of its open one, in ``found``'s order."""
    if not found:
        return []
    universe = repository_records(root, jobs=1)
    known = open_incidents(universe)
    groups: dict[Key | int, list[Found]] = {}
    for index, item in enumerate(found):  # one failure seen in two logs is one failure
        groups.setdefault(failure_key(_fields(item.values)) or index, []).append(item)
    outcomes: dict[Key | int, Outcome] = {}
    new: list[tuple[Key | int, Found, int]] = []
    for key, group in groups.items():
        count = sum(item.occurrences for item in group)
        record = known.get(key) if isinstance(key, tuple) else None
        total = _add_occurrences(Path(record.path), count, universe=universe, now=now) if record else None
        if record is not None and total is not None:
            outcomes[key] = Outcome("occurrence", Path(record.path), count, total, group[0].details)
        else:
            new.append((key, group[0], count))
    paths = file_all([_counted(item.values, count) for _, item, count in new], root=root, now=now)
    for (key, item, count), path in zip(new, paths):
        outcomes[key] = Outcome("created", path, count, count, item.details)
    return [outcomes[key] for key in groups]


def _counted(values: dict[str, Any], occurrences: int) -> dict[str, Any]:
    if occurrences <= 1:
        return values
    return {**values, "extra": {**values.get("extra", {}), "occurrences": occurrences}}


def _add_occurrences(path: Path, count: int, *, universe: list[Record], now: datetime) -> int | None:
    """Add ``count`` occurrences to the incident at ``path``; its new total (None: it was
    resolved meanwhile, and stays as it is)."""
    total = 0

    def change(text: str) -> str:
        nonlocal total
        document, _ = roundtrip.load(text)
        if document.get("status") == "resolved":
            raise _Resolved()
        current = document.get("occurrences", 1)
        total = (current if isinstance(current, int) and not isinstance(current, bool) else 1) + count
        return edited_text(text, [(["occurrences"], total)], now=now)

    try:
        rewrite(path, change, universe=universe, now=now)
    except _Resolved:
        return None
    return total
