"""Repeat incidents: the same failure twice is a candidate for automation.

Grouping is decisive only for evidence a person can check: ``repeat_of`` links, and the one
key each incident has (its failure mode with the codes that tell that mode's failures apart,
or the words of an error no specific mode explains; see :mod:`tooling.analysis.identity`).
``not_repeat_of`` keeps two incidents apart; paraphrases and text similarity only suggest (see
:mod:`tooling.analysis.similarity`). Linear in the number of incidents: union-find over keys,
no comparison of all pairs.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta

from tooling.analysis.catalogue import Automation, by_id, catalogue as automations, suggest
from tooling.analysis.identity import Identity, identify, identify_all
from tooling.analysis.incidents import IncidentView
from tooling.analysis.postmortems import ActionItemRow, PostmortemView
from tooling.analysis.similarity import Index
from tooling.failures.signatures import normalise
from tooling.messages import N_, Message, message
from tooling.records.load import no_collection

# Why incidents are one failure besides their key's evidence; why an earlier one may be this one
MARKED, ALONE = message(N_("marked repeat_of")), message(N_("one incident"))
SIMILAR = N_("similar wording (%(score)s)")


class _UnionFind:
    """Sets of incidents; a set never takes in an incident one of its members says it is not."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}
        self.apart: dict[str, set[str]] = {}  # root -> incidents its members were said not to repeat

    def find(self, item: str) -> str:
        root = self.parent.setdefault(item, item)
        while root != self.parent[root]:
            root = self.parent[root]
        while item != root:  # path compression keeps later finds O(1)
            self.parent[item], item = root, self.parent[item]
        return root

    def keep_apart(self, a: str, b: str) -> None:
        self.apart.setdefault(self.find(a), set()).add(b)
        self.apart.setdefault(self.find(b), set()).add(a)

    def union(self, a: str, b: str, *, force: bool = False) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb or (not force and self._conflict(ra, rb)):
            return
        keep, gone = min(ra, rb), max(ra, rb)
        self.parent[gone] = keep
        if gone in self.apart:
            self.apart.setdefault(keep, set()).update(self.apart.pop(gone))

    def _conflict(self, ra: str, rb: str) -> bool:
        return any(self.find(x) == rb for x in self.apart.get(ra, ())) or \
            any(self.find(x) == ra for x in self.apart.get(rb, ()))


def group_ids(views: list[IncidentView]) -> list[list[IncidentView]]:
    """Incidents partitioned into failures; each group in detection order, groups by first incident."""
    return [g.incidents for g in groups_of(views)]


@dataclass
class Group:
    incidents: list[IncidentView]
    reasons: list[Message] = field(default_factory=list)  # why they are one failure, for a person to check

    @property
    def explanation(self) -> tuple[Message, ...]:
        """The reasons, each once; shown as one line by :func:`tooling.messages.render`."""
        return tuple(dict.fromkeys(self.reasons)) or (ALONE,)


def groups_of(views: list[IncidentView], identities: dict[str, Identity] | None = None) -> list[Group]:
    with no_collection():  # sets, lists and groups of every incident, without a cycle among them
        return _groups_of(views, identify_all(views) if identities is None else identities)


def _groups_of(views: list[IncidentView], identities: dict[str, Identity]) -> list[Group]:
    sets, first, known = _UnionFind(), {}, {v.id for v in views}
    for view in views:
        sets.find(view.id)
        for other in view.data.get("not_repeat_of", []):
            if other in known:
                sets.keep_apart(view.id, other)
    for view in views:
        key = identities[view.id].key
        if key is not None:
            sets.union(view.id, first.setdefault(key, view.id))
        if view.repeat_of in known:
            sets.union(view.id, view.repeat_of, force=True)  # a person's link wins over everything
    members: dict[str, list[IncidentView]] = defaultdict(list)
    for view in views:
        members[sets.find(view.id)].append(view)
    groups = [Group(g, _reasons(g, identities)) for g in members.values()]
    return sorted(groups, key=lambda g: (g.incidents[0].detected, g.incidents[0].id))


def _reasons(group: list[IncidentView], identities: dict[str, Identity]) -> list[Message]:
    if len(group) < 2:
        return []
    ids = {v.id for v in group}
    reasons = []
    keys = Counter(identities[v.id].key for v in group if identities[v.id].key is not None)
    for key, count in keys.most_common():
        if count > 1:
            members = [identities[v.id] for v in group if identities[v.id].key == key]
            if (why := members[0].why(sorted({c for m in members for c in m.naming_codes}))) is not None:
                reasons.append(why)
    if any(v.repeat_of in ids for v in group):
        reasons.append(MARKED)
    return reasons


@dataclass
class Candidate:
    """A failure seen more than once, with what it cost and what automating it means."""

    incidents: list[IncidentView]
    signature: str
    automation: Automation
    state: str  # one of STATES
    planned_by: list[str] = field(default_factory=list)  # "PM-0001 #3": the rows of `actions`
    actions: list[ActionItemRow] = field(default_factory=list)  # the board's items automating it
    failure_mode: str | None = None
    reason: tuple[Message, ...] = ()  # why these incidents are one failure

    @property
    def occurrences(self) -> int:
        return sum(v.occurrences for v in self.incidents)

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


STATES = (N_("not automated"), N_("automation planned"), N_("automation in progress"), N_("automated"),
          N_("automation not working"))  # marked: the site shows them in the edition's language


def item_automation(row: ActionItemRow) -> Automation | None:
    """The catalogue automation an action item's description names by the catalogue's own
    signatures ("drain ... on Xid 79" is gpu-xid-drain), or None when it names none."""
    text = str(row.item["description"]).lower()
    return next((a for a in automations() if a.signatures and any(p.search(text) for p in a.signatures)), None)


class AutomationItems:
    """Which rows of the action-item board automate which failure, indexed once per analysis.

    An automate item (not wont-do) whose description names a catalogue automation belongs to
    the failures that call for that automation; one that names none belongs to the failures of
    its postmortem's incidents. An item naming another automation belongs to that one's failure
    even when its postmortem is about this one (a drain-and-swap item in a hang postmortem)."""

    def __init__(self, postmortems: list[PostmortemView]) -> None:
        self.named: dict[str, list[ActionItemRow]] = defaultdict(list)  # automation id -> rows
        self.unnamed: dict[str, list[ActionItemRow]] = defaultdict(list)  # incident id -> rows
        for pm in postmortems:
            for row in pm.items:
                if row.item["kind"] != "automate" or row.item["status"] == "wont-do":
                    continue
                if (named := item_automation(row)) is not None:
                    self.named[named.id].append(row)
                else:
                    for incident in pm.data["incidents"]:
                        self.unnamed[incident].append(row)

    def of(self, group: list[IncidentView], automation: Automation) -> list[ActionItemRow]:
        """The group's rows in board order of postmortem and item number, each once."""
        rows = {(r.postmortem, r.index): r for r in self.named.get(automation.id, [])}
        for view in group:
            rows.update({(r.postmortem, r.index): r for r in self.unnamed.get(view.id, [])})
        return [rows[key] for key in sorted(rows)]


def _state(group: list[IncidentView], rows: list[ActionItemRow]) -> str:
    """What the board says about this failure's automation: any done item followed by another
    incident means it does not work; otherwise it is automated only when every item is done."""
    if not rows:
        return "not automated"
    statuses = {row.item["status"] for row in rows}
    done = [date.fromisoformat(row.item.get("done_on") or row.item.get("due") or "9999-12-31")
            for row in rows if row.item["status"] == "done"]
    if done and any(v.detected.date() > min(done) for v in group):
        return "automation not working"
    if statuses == {"done"}:
        return "automated"
    return "automation in progress" if statuses & {"in-progress", "done"} else "automation planned"


def candidates(groups: list[Group], postmortems: list[PostmortemView],
               identities: dict[str, Identity]) -> list[Candidate]:
    """Failures seen twice or more (a record may stand for several), most occurrences first,
    then most GPU-hours lost."""
    out, items = [], AutomationItems(postmortems)
    for group in groups:
        views = group.incidents
        if sum(v.occurrences for v in views) < 2:
            continue
        signatures = Counter(normalise(s) for v in views for s in v.data.get("signatures", []))
        top = signatures.most_common(1)[0][0] if signatures else ""
        modes = Counter(m.id for v in views if (m := identities[v.id].mode) is not None and not m.generic)
        mode = modes.most_common(1)[0][0] if modes else None
        automation = _automation(mode, views, signatures)
        rows = items.of(views, automation)
        out.append(Candidate(views, top, automation, _state(views, rows), [f"{r.postmortem} #{r.index}" for r in rows],
                             rows, failure_mode=mode, reason=group.explanation))
    return sorted(out, key=lambda c: (-c.occurrences, -c.gpu_hours, c.incidents[0].id))


def _automation(mode: str | None, views: list[IncidentView], signatures: Counter[str]) -> Automation:
    """The automation the failure mode calls for; the catalogue's conditions when no mode is known."""
    from tooling.failures.catalogue import catalogue

    known = catalogue().get(mode) if mode else None
    if known is not None and (found := by_id(known.automation)) is not None:
        return found
    texts = [*signatures, *(v.data["title"] for v in views)]
    return suggest(views[0].data["layer"], views[0].data["symptom"], texts)


def likely_repeats_of(target: IncidentView, views: list[IncidentView], index: Index, *,
                      limit: int = 5) -> list[tuple[str, Message]]:
    """(incident id, why) for the incidents ``target`` most likely repeats: the same key first."""
    key = identify(target).key
    same = [(v.id, why) for v in reversed(views) if v.id != target.id and key is not None
            and (found := identify(v)).key == key and (why := found.same) is not None]
    by_text = [(s.similar, message(SIMILAR, score=f"{s.score:.2f}")) for s in index.similar(target, limit=limit)]
    seen: set[str] = set()
    return [(i, why) for i, why in same + by_text if not (i in seen or seen.add(i))][:limit]  # type: ignore[func-returns-value]
