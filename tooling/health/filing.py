"""Filing a node's faults: one incident per node and failure, as ``tooling watch`` files a log's.

A fault read from the kernel is drafted as ``tooling scan`` drafts it
(:func:`tooling.writers.filing.values_for`); a standing fault (a counter, a full disk) from its
evidence. Both are filed with scope cluster, the node in ``nodes``, by
:func:`tooling.watch.occurrences.file_found` keyed per node: the same failure on the same node
while its incident is open adds occurrences to it. Faults of one failure (an Xid 48 and the ECC
counter that went with it) are one failure, filed once. A standing fault whose lines are the
ones it was filed with (the same counter at the next check) is known: nothing is written. A
hardware fault of a check that drains the node (``drain``) is filed ``handled_by`` the node drain
(:data:`~tooling.health.faults.DRAIN_AUTOMATION`): no person took the node out of service.
"""
from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

from tooling.health.faults import DRAIN_AUTOMATION, Fault, Filed
from tooling.health.state import NodeState
from tooling.watch.occurrences import Found, Mark, failure_key, file_found, incident_fields
from tooling.watch.state import new_id
from tooling.writers.filing import MAX_TITLE, SEVERITY, title, values_for

BY = "tooling health-check"


def values(fault: Fault, *, node: str, cluster: str, now: datetime, drain: bool = False) -> dict[str, Any]:
    """The incident of ``fault`` on ``node`` (keyword arguments of new_incident); ``drain``: the
    check drains the node for its faults."""
    drained = drain and not fault.warning and fault.mode.automation == DRAIN_AUTOMATION
    where = {"run": None, "extra": {"scope": "cluster", "cluster": cluster,
                                    **({"handled_by": DRAIN_AUTOMATION} if drained else {})}}
    if fault.draft is not None:
        drafted = values_for(fault.draft, where, by=f"{BY} on {node}")
        # a link to the log read where it is a file (a stand-in), none to the output of dmesg
        links = [link for link in drafted["extra"]["links"] if os.path.isfile(link["url"])]
        return {**drafted, "title": _cut(f"{title(fault.draft)} on {node}"), "nodes": [node],
                "extra": {**drafted["extra"], "links": links}}
    return {
        "title": _cut(f"{fault.mode.title} on {node}: {fault.evidence}"), "symptom": fault.mode.symptom,
        "layer": fault.mode.layer, "signatures": list(fault.lines), "nodes": [node], "ranks": [],
        "detected_at": now.replace(microsecond=0).isoformat(), "run": None, "severity": SEVERITY,
        "extra": {**where["extra"], "failure_mode": fault.mode.id,
                  "notes": f"Found by {BY} on {node}: {fault.evidence}, read from {fault.source}."},
    }


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TITLE else text[:MAX_TITLE - 1] + "…"


def _known(fault: Fault, known: NodeState) -> str | None:
    """The incident a standing fault was filed as, when its lines have not changed since."""
    before = known.standing.get(fault.standing or "")
    same = before is not None and before.get("lines") == list(fault.lines)
    return str(before["incident"]) if same and before and before.get("incident") else None


def file_faults(faults: list[Fault], known: NodeState, *, node: str, cluster: str, root: Path,
                now: datetime, drain: bool = False) -> list[Filed]:
    """File the faults not filed yet (``drain``: the check drains the node for them); what became
    of each (in order)."""
    known.id = known.id or new_id()  # the id of the marks its incidents carry, as a watch's
    filed: list[Filed | None] = [None] * len(faults)
    groups: dict[Any, list[int]] = {}
    drafted: list[dict[str, Any]] = []
    for index, fault in enumerate(faults):
        drafted.append(values(fault, node=node, cluster=cluster, now=now, drain=drain))
        if (incident := _known(fault, known)) is not None:
            filed[index] = Filed(incident, "known")
            continue
        key = failure_key(incident_fields(drafted[index]), by_node=True)
        groups.setdefault(key if key is not None else index, []).append(index)
    members = list(groups.values())
    found = [Found(_together([drafted[i] for i in group]), sum(faults[i].occurrences for i in group), {"group": n})
             for n, group in enumerate(members)]
    for outcome in file_found(found, root=root, now=now, mark=Mark(known.id, known.polls + 1), by_node=True):
        for index in members[outcome.details["group"]]:
            filed[index] = Filed(outcome.incident, outcome.action, outcome.occurrences, outcome.path)
    return [f or Filed(None, "none") for f in filed]


def _together(drafted: list[dict[str, Any]]) -> dict[str, Any]:
    """One failure's incident from its faults': the first's, with every fault's lines."""
    lines = list(dict.fromkeys(line for values in drafted for line in values["signatures"]))
    return {**drafted[0], "signatures": lines}
