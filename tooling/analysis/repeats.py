"""Repeat incidents: the same failure twice is a candidate for automation.

Grouping is decisive only: explicit ``repeat_of`` links, and fingerprints, that is the
normalised error signatures together with layer and symptom. Text similarity only suggests
(see :mod:`tooling.analysis.similarity`). Linear in the number of incidents: union-find over
fingerprint keys, no comparison of all pairs.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta

from tooling.analysis.catalogue import Automation, suggest
from tooling.analysis.incidents import IncidentView
from tooling.analysis.postmortems import PostmortemView
from tooling.failures.signatures import normalise
from tooling.analysis.similarity import Index


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, item: str) -> str:
        root = self.parent.setdefault(item, item)
        while root != self.parent[root]:
            root = self.parent[root]
        while item != root:  # path compression keeps later finds O(1)
            self.parent[item], item = root, self.parent[item]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def fingerprints(view: IncidentView) -> set[tuple[str, str, str]]:
    layer, symptom = view.data["layer"], view.data["symptom"]
    return {(layer, symptom, normalise(s)) for s in view.data.get("signatures", [])}


def group_ids(views: list[IncidentView]) -> list[list[IncidentView]]:
    """Incidents partitioned into failures; each group in detection order, groups by first incident."""
    sets, first = _UnionFind(), {}
    known = {v.id for v in views}
    for view in views:
        sets.find(view.id)
        for key in fingerprints(view):
            sets.union(view.id, first.setdefault(key, view.id))
        if view.repeat_of in known:
            sets.union(view.id, view.repeat_of)
    groups: dict[str, list[IncidentView]] = defaultdict(list)
    for view in views:
        groups[sets.find(view.id)].append(view)
    return sorted(groups.values(), key=lambda g: (g[0].detected, g[0].id))


@dataclass
class Candidate:
    """A failure seen more than once, with what it cost and what automating it means."""

    incidents: list[IncidentView]
    signature: str
    automation: Automation
    state: str  # not automated | automation planned | automated | automation not working
    planned_by: list[str] = field(default_factory=list)  # "PM-0001 #3"

    @property
    def occurrences(self) -> int:
        return len(self.incidents)

    @property
    def gpu_hours(self) -> float:
        return round(sum(v.gpu_hours_lost for v in self.incidents), 1)

    @property
    def steps_lost(self) -> int:
        return sum(int(v.data.get("impact", {}).get("steps_lost", 0)) for v in self.incidents)

    @property
    def hours_to_resolve(self) -> float:
        spans = [t for v in self.incidents if (t := v.time_to_resolve) is not None]
        return round(sum(spans, timedelta()).total_seconds() / 3600, 1)

    @property
    def layer(self) -> str:
        return str(self.incidents[0].data["layer"])

    @property
    def symptom(self) -> str:
        return str(self.incidents[0].data["symptom"])


def _state(group: list[IncidentView], postmortems: list[PostmortemView]) -> tuple[str, list[str]]:
    ids = {v.id for v in group}
    items = [(pm.id, row) for pm in postmortems if ids & set(pm.data["incidents"])
             for row in pm.items if row.item["kind"] == "automate" and row.item["status"] != "wont-do"]
    if not items:
        return "not automated", []
    refs = [f"{pm} #{row.index}" for pm, row in items]
    done = [date.fromisoformat(row.item.get("done_on") or row.item.get("due") or "9999-12-31")
            for _, row in items if row.item["status"] == "done"]
    if not done:
        return "automation planned", refs
    since = min(done)
    if any(v.detected.date() > since for v in group):
        return "automation not working", refs
    return "automated", refs


def candidates(groups: list[list[IncidentView]], postmortems: list[PostmortemView]) -> list[Candidate]:
    """Groups of two or more, most occurrences first, then most GPU-hours lost."""
    out = []
    for group in groups:
        if len(group) < 2:
            continue
        signatures = Counter(normalise(s) for v in group for s in v.data.get("signatures", []))
        top = signatures.most_common(1)[0][0] if signatures else ""
        texts = [*signatures, *(v.data["title"] for v in group)]
        state, refs = _state(group, postmortems)
        out.append(Candidate(group, top, suggest(group[0].data["layer"], group[0].data["symptom"], texts),
                             state, refs))
    return sorted(out, key=lambda c: (-c.occurrences, -c.gpu_hours, c.incidents[0].id))


def likely_repeats_of(target: IncidentView, views: list[IncidentView], index: "Index", *,
                      limit: int = 5) -> list[tuple[str, str]]:
    """(incident id, why) for the incidents ``target`` most likely repeats: same signature first."""
    keys = fingerprints(target)
    same = [(v.id, "same error signature") for v in reversed(views)
            if v.id != target.id and keys & fingerprints(v)]
    by_text = [(s.similar, f"similar wording ({s.score:.2f})") for s in index.similar(target, limit=limit)]
    seen: set[str] = set()
    return [(i, why) for i, why in same + by_text if not (i in seen or seen.add(i))][:limit]  # type: ignore[func-returns-value]
