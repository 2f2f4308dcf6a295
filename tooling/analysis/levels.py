"""Repeats at two levels: the same failure again, and the same automation would have handled it.

"The same failure again" is :mod:`tooling.analysis.repeats`' strict grouping, what an incident's
page links to. The candidates ranking asks another question: which automation removes the most
occurrences. A divergence is a divergence for the loss-spike rollback whatever its data shard or
cause, a preemption a preemption for auto-resume whatever its job: so the failures whose
automation (their failure mode's in the catalogue, else the automation catalogue's own
conditions) is the same one are a family here. An automation that only guides a person
(``runbook-first``, the catch-all) handles nothing itself, so it joins no failures: each stays a
family of its own.

Linear in the number of groups: one dictionary look-up per group with a mode, the automation
catalogue's conditions only for a group without one; no sorting.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tooling.analysis.identity import Identity
from tooling.analysis.incidents import IncidentView
from tooling.analysis.repeats import Group
from tooling.catalogue.automations import Automation, by_id, suggest
from tooling.catalogue.automations import catalogue as automations
from tooling.catalogue.evidence import described_mode
from tooling.catalogue.modes import catalogue
from tooling.catalogue.phases import named_phase
from tooling.catalogue.signatures import normalise
from tooling.messages import N_, Message, message
from tooling.records.load import no_collection

# The level of a group, shown on the candidates page and carried by `tooling repeats --json`
SAME_FAILURE, SAME_AUTOMATION = N_("same failure"), N_("same automation")
LEVELS = (SAME_FAILURE, SAME_AUTOMATION)
HANDLES = N_("%(count)s failures the same automation would have handled: %(failures)s")
_CHECKPOINT_PHASES = ("checkpoint-save", "checkpoint-load")


@dataclass
class Family:
    """Failures (same-failure groups) that one automation would each have handled."""

    failures: list[Group]
    automation: Automation
    modes: list[str | None] = field(default_factory=list)  # each failure's primary mode, in order

    @property
    def level(self) -> str:
        """SAME_FAILURE when the family is one failure, else SAME_AUTOMATION."""
        return SAME_FAILURE if len(self.failures) == 1 else SAME_AUTOMATION

    @property
    def incidents(self) -> list[IncidentView]:
        return sorted((v for g in self.failures for v in g.incidents), key=lambda v: (v.detected, v.id))

    @property
    def explanation(self) -> tuple[Message, ...]:
        """Why these incidents are one group: one failure's reasons, or the automation they share
        followed by the reasons of each failure seen more than once."""
        if self.level == SAME_FAILURE:
            return self.failures[0].explanation
        named = Counter(m or f"{g.incidents[0].data['layer']}/{g.incidents[0].data['symptom']}"
                        for m, g in zip(self.modes, self.failures))
        failures = ", ".join(f"{m} x{n}" if n > 1 else m for m, n in named.items())
        own = [why for g in self.failures if len(g.incidents) > 1 for why in g.explanation]
        return tuple(dict.fromkeys([message(HANDLES, count=len(self.failures), failures=failures), *own]))


def group_mode(views: list[IncidentView], identities: dict[str, Identity]) -> str | None:
    """The most common specific failure mode of a group's incidents, if any names one."""
    modes = Counter(m.id for v in views if (m := identities[v.id].mode) is not None and not m.generic)
    return modes.most_common(1)[0][0] if modes else None


def automation_of(mode: str | None, views: list[IncidentView]) -> Automation:
    """The automation the failure mode calls for; the catalogue's conditions when no mode is known.
    A pre-flight check covers only the failures filed under its own layers: a hang filed under
    another layer or none (a host's PCIe setting, for the version pre-flight) is the hang's
    handler's, since the pre-flight refuses a start and handles no hang once a job runs. A
    consequence that only a person handles (the process aborted) gives way to its symptom's
    handler too: the abort says nothing of the hang before it, which the watchdog reacts to."""
    known = catalogue().get(mode) if mode else None
    if known is not None and (found := by_id(known.automation)) is not None:
        layer, symptom = str(views[0].data["layer"]), str(views[0].data["symptom"])
        gives_way = _outside(found, layer) or (known.downstream and found.implementation is None)
        return handler if gives_way and (handler := handler_of(symptom)) else found
    texts = [*(normalise(s) for v in views for s in v.data.get("signatures", [])), *(v.data["title"] for v in views)]
    found = suggest(views[0].data["layer"], views[0].data["symptom"], texts)
    symptom = str(views[0].data["symptom"])
    if symptom in found.symptoms or (handler := handler_of(symptom)) is None or not _undiagnosed(views):
        return found
    return handler  # a symptom nobody diagnosed (a hang), whatever layer it was filed under: its handler's


def _undiagnosed(views: list[IncidentView]) -> bool:
    """Whether a failure's records name no failure mode in their words and no checkpoint phase of
    their own (a hang while saving is the save's to handle): all that is known is the symptom."""
    return not any(described_mode(v.data)[2] or named_phase(v.data) in _CHECKPOINT_PHASES for v in views)


def handler_of(symptom: str) -> Automation | None:
    """The first automation that ships and reacts to the symptom itself (a hang: the watchdog)."""
    return next((a for a in automations() if a.implementation is not None and symptom in a.symptoms), None)


def _outside(automation: Automation, layer: str) -> bool:
    """Whether a failure's layer ('unknown' included) lies outside the layers of a pre-flight check."""
    return automation.before_start and bool(automation.layers) and layer not in automation.layers


def _joins(mode: str | None, automation: Automation, views: list[IncidentView]) -> bool:
    """Whether a failure joins the others of its automation: not when the automation only guides
    a person (nothing would have handled it), nor when no mode names the failure and the
    automation was only guessed from its layer or words; a symptom the automation reacts to
    (a hang for the watchdog, a divergence for the rollback) is evidence enough."""
    if automation.implementation is None:
        return False
    return mode is not None or str(views[0].data["symptom"]) in automation.symptoms


def families(groups: list[Group], identities: dict[str, Identity]) -> list[Family]:
    """Every same-failure group in exactly one family, families in order of their first incident
    (a family starts at its first group, and the groups come in that order). Made with the
    collector off, as the groups are: its passes over 100,000 incidents' objects cost seconds."""
    with no_collection():
        return _families(groups, identities)


def _families(groups: list[Group], identities: dict[str, Identity]) -> list[Family]:
    out: list[Family] = []
    joined: dict[str, Family] = {}  # automation id -> its family, for automations that handle something
    for group in groups:
        mode = group_mode(group.incidents, identities)
        automation = automation_of(mode, group.incidents)
        if not _joins(mode, automation, group.incidents):
            out.append(Family([group], automation, [mode]))
        elif (family := joined.get(automation.id)) is not None:
            family.failures.append(group)
            family.modes.append(mode)
        else:
            out.append(joined.setdefault(automation.id, Family([group], automation, [mode])))
    return out
