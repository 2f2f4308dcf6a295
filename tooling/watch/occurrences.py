"""Filing what a watch finds: one incident per failure, or one more occurrence of its open incident.

The same failure is what ``tooling repeats`` calls the same
(:func:`tooling.analysis.identity.identify_data`: the failure mode with the codes that tell its
failures apart), hitting the same run (or cluster); where that identity has no key (a catch-all
such as a hang, which names no error line) the failure mode stands for it; the node health check
files per node too (``by_node``: Xid 79 on n2 and on n3 are two incidents, one per node to swap).
An incident is open until it is resolved. Occurrences are added through the locked,
compare-and-swap edit of ``tooling set`` (:func:`tooling.writers.edit.rewrite`), so a person
editing the same incident loses nothing, and an incident resolved meanwhile gets no occurrence:
a new incident is filed.
New incidents are filed all or none (:func:`tooling.writers.filing.file_all`).

Each incident a poll writes carries the poll's :class:`Mark` (``watch_polls: {WATCH: POLL-FAILURE}``),
written in the same atomic write as the occurrences: a failure whose mark an incident has is
filed already and is not filed again (a watch killed in the middle of a poll files the rest).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from tooling.analysis.identity import identify_data
from tooling.analysis.incidents import where_of
from tooling.records import roundtrip
from tooling.records.kinds import KINDS
from tooling.rules.others import Repository
from tooling.watch.known import Incident, KnownIncidents
from tooling.writers.edit import edit_document, rewrite
from tooling.writers.filing import file_all

Key = tuple[str, ...]


@dataclass(frozen=True)
class Found:
    """One failure found in a poll: its incident's fields, how many times it happened, its JSON."""
    values: dict[str, Any]  # keyword arguments of tooling.writers.scaffold.new_incident
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


@dataclass(frozen=True)
class Mark:
    """Which poll of which watch writes (``watch``: the id of its offset file)."""
    watch: str
    poll: int

    def of(self, index: int) -> str:
        """What the incident of the poll's ``index``-th failure carries under the watch's id."""
        return f"{self.poll}-{index}"


class _Resolved(Exception):
    """The incident was resolved since it was read: the failure is a new incident."""


def failure_key(data: dict[str, Any], *, by_node: bool = False) -> Key | None:
    """Which failure an incident (or an incident about to be filed) is, and where it hit (with
    ``by_node``, on which nodes too)."""
    try:
        identity = identify_data(data)
    except (TypeError, AttributeError, ValueError):  # a record too broken to say
        return None
    nodes = data.get("nodes")
    on = ("nodes", *sorted(str(n) for n in nodes)) if by_node and isinstance(nodes, list) else ()
    if identity.key is not None:
        return (where_of(data), *identity.key, *on)
    mode = data.get("failure_mode")
    return (where_of(data), "mode", str(mode), *on) if mode else None


def incident_fields(values: dict[str, Any]) -> dict[str, Any]:
    """An incident's fields from new_incident's keyword arguments."""
    return {**{k: v for k, v in values.items() if k != "extra"}, **values.get("extra", {})}


def open_incidents(incidents: list[Incident], *, by_node: bool = False) -> dict[Key, Incident]:
    """The newest open incident of each failure (each incident's failure worked out once)."""
    found: dict[Key, Incident] = {}
    for incident in sorted((i for i in incidents if not i.resolved), key=_number):
        if by_node not in incident.keys:
            incident.keys[by_node] = failure_key(incident.data or {}, by_node=by_node)
        if (key := incident.keys[by_node]) is not None:
            found[key] = incident
    return found


def _number(incident: Incident) -> int:
    digits = incident.id.rpartition("-")[2]
    return int(digits) if digits.isdigit() else -1


def failures_of(found: list[Found]) -> list[Found]:
    """One per failure, in ``found``'s order: one failure seen in two logs is one failure."""
    groups: dict[Key | int, list[Found]] = {}
    for index, item in enumerate(found):
        groups.setdefault(failure_key(incident_fields(item.values)) or index, []).append(item)
    return [Found(g[0].values, sum(item.occurrences for item in g), g[0].details) for g in groups.values()]


def file_found(failures: list[Found], *, root: Path, now: datetime, mark: Mark, by_node: bool = False,
               incidents: KnownIncidents | None = None) -> list[Outcome]:
    """File each failure (one per failure: :func:`failures_of`) as a new incident or as
    occurrences of its open one, in order; those an incident has the mark of are filed already.
    ``incidents``: what the watch knows of them from its earlier polls (read again where changed)."""
    if not failures:
        return []
    incidents = incidents or KnownIncidents(root, follow=False)  # one look: nothing to follow
    known = open_incidents(incidents.now(), by_node=by_node)
    universe = Repository(root, names=incidents.names)  # what the occurrence writes' rules ask, read by name
    outcomes: dict[int, Outcome] = {}
    new: list[tuple[int, Found]] = []
    for index, item in enumerate(failures):
        if incidents.carries(mark.watch, mark.of(index)):  # filed already, by this poll before a stop
            continue
        key = failure_key(incident_fields(item.values), by_node=by_node)
        record = known.get(key) if key is not None else None
        total = _add_occurrences(Path(record.path), item.occurrences, mark.watch, mark.of(index),
                                 universe=universe, now=now) if record else None
        if record is not None and total is not None:
            outcomes[index] = Outcome("occurrence", Path(record.path), item.occurrences, total, item.details)
        else:
            new.append((index, item))
    # numbered after the highest of the listing just refreshed: the folder is not listed again for it
    taken = incidents.names.highest(KINDS["incident"].directory, KINDS["incident"].id_prefix) if new else None
    paths = file_all([_marked(item.values, item.occurrences, mark, index) for index, item in new], root=root, now=now,
                     taken=taken)
    for (index, item), path in zip(new, paths):
        outcomes[index] = Outcome("created", path, item.occurrences, item.occurrences, item.details)
    incidents.wrote([outcome.path for outcome in outcomes.values()])  # its folder is not listed again for them
    return [outcomes[index] for index in sorted(outcomes)]


def _marked(values: dict[str, Any], occurrences: int, mark: Mark, index: int) -> dict[str, Any]:
    extra = {**values.get("extra", {}), "watch_polls": {mark.watch: mark.of(index)}}
    return {**values, "extra": {**extra, "occurrences": occurrences} if occurrences > 1 else extra}


def _add_occurrences(path: Path, count: int, watch: str, token: str, *, universe: Repository,
                     now: datetime) -> int | None:
    """Add ``count`` occurrences to the incident at ``path``, and the poll's mark (``token``
    under ``watch``) in the same write; its new total (None: it was resolved meanwhile, and stays
    as it is)."""
    total = 0

    def change(text: str) -> str:
        nonlocal total
        document, yaml = roundtrip.load(text)
        if document.get("status") == "resolved":
            raise _Resolved()
        current = document.get("occurrences", 1)
        total = (current if isinstance(current, int) and not isinstance(current, bool) else 1) + count
        # the mark beside the others' (a mark of its own when the incident has none yet)
        mark = (["watch_polls", watch], token) if isinstance(document.get("watch_polls"), dict) \
            else (["watch_polls"], {watch: token})
        edit_document(document, [(["occurrences"], total), mark], now=now)
        return roundtrip.dump(document, yaml)

    try:  # a watch shows no warning: none is looked for
        rewrite(path, change, universe=universe, now=now, warnings=False)
    except _Resolved:
        return None
    return total
