"""Automation candidates: failures seen twice or more, with what they cost and what the action-item
board says about automating them (the notes' rule: the same incident twice calls for automation).

The groups are families of :mod:`tooling.analysis.levels`: one failure seen again, or failures
that the same automation would each have handled (every divergence for the rollback), so the
ranking counts all the occurrences one automation removes; each candidate says its level. Whether that automation ships
comes from its catalogue entry, whether it is in place from the incidents it handled
(``handled_by``): nothing else in a repository says what runs on its clusters.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from datetime import date, timedelta

from tooling.analysis.identity import Identity
from tooling.analysis.incidents import IncidentView
from tooling.analysis.postmortems import ActionItemRow, PostmortemView
from tooling.analysis.levels import SAME_FAILURE, Family, group_mode
from tooling.catalogue.automations import Automation, catalogue as automations
from tooling.catalogue.signatures import normalise
from tooling.messages import N_, Message


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
    reason: tuple[Message, ...] = ()  # why these incidents are one group
    level: str = SAME_FAILURE  # one of levels.LEVELS
    failures: list[list[IncidentView]] = field(default_factory=list)  # its same-failure groups
    # a candidate's incidents are fixed: what each of them is asked several times (the ranking,
    # its state, the output) is counted once; over 100,000 incidents each pass costs

    @cached_property
    def occurrences(self) -> int:
        return sum(v.occurrences for v in self.incidents)

    @cached_property
    def gpu_hours(self) -> float:
        return round(sum(v.gpu_hours_lost for v in self.incidents), 1)

    @property
    def steps_lost(self) -> int:
        return sum(int(v.data.get("impact", {}).get("steps_lost", 0)) for v in self.incidents)

    @property
    def hours_to_resolve(self) -> float:
        spans = [t for v in self.incidents if (t := v.time_to_resolve) is not None]
        return round(sum(spans, timedelta()).total_seconds() / 3600, 1)

    @cached_property
    def handled(self) -> list[IncidentView]:
        """The incidents its automation handled without a person (their ``handled_by``)."""
        return [v for v in self.incidents if v.data.get("handled_by") == self.automation.id]

    @property
    def handled_count(self) -> int:
        return sum(v.occurrences for v in self.handled)

    @property
    def handled_since(self) -> date | None:
        """The day of the first incident its automation handled."""
        return min((v.detected.date() for v in self.handled), default=None)

    @property
    def availability(self) -> str:
        """One of AVAILABILITY: nothing ships for its automation; it ships; or this repository's
        records show it at work on this failure (an incident of it ``handled_by`` the automation)."""
        if self.automation.implementation is None:
            return "not available"
        return "in place" if self.handled else "available"

    @property
    def layer(self) -> str:
        return str(self.incidents[0].data["layer"])

    @property
    def symptom(self) -> str:
        return str(self.incidents[0].data["symptom"])


STATES = (N_("not automated"), N_("automation planned"), N_("automation in progress"), N_("automated"),
          N_("automation not working"))  # marked: the site shows them in the edition's language
AVAILABILITY = (N_("not available"), N_("available"), N_("in place"))  # what ships, and whether it is at work


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


def _state(failures: list[list[IncidentView]], rows: list[ActionItemRow]) -> str:
    """What the board says about this automation: a failure it was done for (seen by the day the
    first item was done; every failure when none was) seen again after that day means it does
    not work; otherwise it is automated only when every item is done. A failure first seen after
    that day is counted as the automation's, but whether the item covers it is a person's call."""
    if not rows:
        return "not automated"
    statuses = {row.item["status"] for row in rows}
    done = [date.fromisoformat(row.item.get("done_on") or row.item.get("due") or "9999-12-31")
            for row in rows if row.item["status"] == "done"]
    if done:
        since = min(done)
        seen = [g for g in failures if any(v.detected.date() <= since for v in g)] or failures
        if any(v.detected.date() > since for g in seen for v in g):
            return "automation not working"
    if statuses == {"done"}:
        return "automated"
    return "automation in progress" if statuses & {"in-progress", "done"} else "automation planned"


def candidates(found: list[Family], postmortems: list[PostmortemView], identities: dict[str, Identity],
               normalised: dict[str, tuple[str, ...]] | None = None) -> list[Candidate]:
    """Families seen twice or more (a record may stand for several), in tiers (:func:`_tier`),
    each most occurrences first, then most GPU-hours lost. ``normalised``: each incident's
    signatures, normalised, where they were kept (analysis.derived)."""
    out, items = [], AutomationItems(postmortems)
    for family in found:
        views = family.incidents
        if sum(v.occurrences for v in views) < 2:
            continue
        signatures = Counter(s for v in views for s in (normalised[v.id] if normalised is not None
                                                        else map(normalise, v.data.get("signatures", []))))
        top = signatures.most_common(1)[0][0] if signatures else ""
        rows = items.of(views, family.automation)
        out.append(Candidate(views, top, family.automation, _state([g.incidents for g in family.failures], rows), [f"{r.postmortem} #{r.index}" for r in rows],
                             rows, failure_mode=group_mode(views, identities), reason=family.explanation,
                             level=family.level, failures=[g.incidents for g in family.failures]))
    return sorted(out, key=lambda c: (_tier(c), -c.occurrences, -c.gpu_hours, c.incidents[0].id))


def _tier(c: Candidate) -> int:
    """An automation that keeps failing first, then failures nobody has automated yet, then
    those whose automation is in place and handling them: they no longer need a person."""
    if c.state == "automation not working":
        return 0
    return 2 if c.availability == "in place" else 1
