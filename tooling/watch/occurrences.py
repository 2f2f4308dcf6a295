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

Watches of one log that are independent readers (each its own offset file) file one incident per
failure between them, each occurrence counted once: which incident is open is read, and it is
written, under one lock of the incidents folder (:func:`tooling.writers.ids.held_folder`), so the
second sees the first's incident; and the occurrences another watch counted are told by where they
start in the log (:mod:`tooling.watch.counted`, ``watch_counted``), written with them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from tooling.analysis.identity import identify_data
from tooling.analysis.incidents import where_of
from tooling.records import roundtrip
from tooling.records.kinds import KINDS
from tooling.rules.others import Repository
from tooling.watch.counted import FIELD, Counted, advanced, covered, marks_in, merged
from tooling.watch.known import Incident, KnownIncidents
from tooling.writers.edit import edit_document, rewrite
from tooling.writers.filing import file_all
from tooling.writers.ids import held_folder

Key = tuple[str, ...]


@dataclass(frozen=True)
class Found:
    """One failure found in a poll: its incident's fields, how many times it happened, its JSON."""
    values: dict[str, Any]  # keyword arguments of tooling.writers.scaffold.new_incident
    occurrences: int
    details: dict[str, Any]
    counted: dict[str, Counted] = field(default_factory=dict)  # by log, where its occurrences start


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


class _Counted(Exception):
    """Every occurrence found was counted by another watch already: nothing to write."""


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
    return [Found(g[0].values, sum(item.occurrences for item in g), g[0].details, merged(item.counted for item in g))
            for g in groups.values()]


def file_found(failures: list[Found], *, root: Path, now: datetime, mark: Mark, by_node: bool = False,
               incidents: KnownIncidents | None = None) -> list[Outcome]:
    """File each failure (one per failure: :func:`failures_of`) as a new incident or as
    occurrences of its open one, in order; those an incident has the mark of are filed already.
    ``incidents``: what the watch knows of them from its earlier polls (read again where changed)."""
    if not failures:
        return []
    incidents = incidents or KnownIncidents(root, follow=False)  # one look: nothing to follow
    if not incidents.started:  # the first look reads every record: not while other writers wait
        incidents.now()
    # from reading which incidents are open to the last write, one writer at a time (another
    # watch of the same log, say): the second files the same failure on the first's incident
    with held_folder(root / KINDS["incident"].directory):
        return _file(failures, root=root, now=now, mark=mark, by_node=by_node, incidents=incidents)


def _file(failures: list[Found], *, root: Path, now: datetime, mark: Mark, by_node: bool,
          incidents: KnownIncidents) -> list[Outcome]:
    known = open_incidents(incidents.now(), by_node=by_node)
    universe = Repository(root, names=incidents.names)  # what the occurrence writes' rules ask, read by name
    outcomes: dict[int, Outcome] = {}
    new: list[tuple[int, Found]] = []
    for index, item in enumerate(failures):
        if incidents.carries(mark.watch, mark.of(index)):  # filed already, by this poll before a stop
            continue
        key = failure_key(incident_fields(item.values), by_node=by_node)
        record = known.get(key) if key is not None else None
        try:
            added = _add_occurrences(Path(record.path), item, mark.watch, mark.of(index), universe=universe,
                                     now=now) if record else None
        except _Counted:  # another watch of the log counted them all
            continue
        if record is not None and added is not None:
            outcomes[index] = Outcome("occurrence", Path(record.path), *added, item.details)
        else:
            new.append((index, item))
    # numbered after the highest of the listing just refreshed: the folder is not listed again for it
    taken = incidents.names.highest(KINDS["incident"].directory, KINDS["incident"].id_prefix) if new else None
    paths = file_all([_marked(item.values, item.occurrences, mark, index, item.counted) for index, item in new],
                     root=root, now=now, taken=taken)
    for (index, item), path in zip(new, paths):
        outcomes[index] = Outcome("created", path, item.occurrences, item.occurrences, item.details)
    incidents.wrote([outcome.path for outcome in outcomes.values()])  # its folder is not listed again for them
    return [outcomes[index] for index in sorted(outcomes)]


def _marked(values: dict[str, Any], occurrences: int, mark: Mark, index: int,
            counted: dict[str, Counted]) -> dict[str, Any]:
    extra = {**values.get("extra", {}), "watch_polls": {mark.watch: mark.of(index)},
             **({FIELD: {mark.watch: advanced(None, counted)}} if any(c.starts for c in counted.values()) else {})}
    return {**values, "extra": {**extra, "occurrences": occurrences} if occurrences > 1 else extra}


def _add_occurrences(path: Path, item: Found, watch: str, token: str, *, universe: Repository,
                     now: datetime) -> tuple[int, int] | None:
    """Add the occurrences of ``item`` no other watch counted to the incident at ``path``, with the
    poll's mark (``token`` under ``watch``) and where they start, in the same write: how many it
    added, and its new total (None: it was resolved meanwhile, and stays as it is; _Counted: none
    to add, nothing written)."""
    added = total = 0

    def change(text: str) -> str:
        nonlocal added, total
        document, yaml = roundtrip.load(text)
        if document.get("status") == "resolved":
            raise _Resolved()
        marks = marks_in(document)
        added = item.occurrences - covered(item.counted, marks, watch)
        if added <= 0:
            raise _Counted()
        current = document.get("occurrences", 1)
        total = (current if isinstance(current, int) and not isinstance(current, bool) else 1) + added
        changes = [(["occurrences"], total), _beside("watch_polls", document, watch, token)]
        if any(c.starts for c in item.counted.values()):
            changes.append(_beside(FIELD, document, watch, advanced(marks.get(watch), item.counted)))
        edit_document(document, changes, now=now)
        return roundtrip.dump(document, yaml)

    try:  # a watch shows no warning: none is looked for
        rewrite(path, change, universe=universe, now=now, warnings=False)
    except _Resolved:
        return None
    return added, total


def _beside(name: str, document: Any, watch: str, value: Any) -> tuple[list[str], Any]:
    """``watch``'s entry of the field ``name`` beside the other watches' (the whole field when
    the incident has none yet, or one that is not a mapping)."""
    return ([name, watch], value) if isinstance(document.get(name), dict) else ([name], {watch: value})
