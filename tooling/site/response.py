"""Incident response as the site words it: the severities, the roles, the first five minutes.

One home for each: the severity page of the playbook (docs/playbook/incident-response.md, which
includes the generated generated/response.md), the status strip and every run's first-response
block are rendered from these tables, in each edition through the message catalogue.

The severities themselves are the incident schema's (:func:`tooling.analysis.status.severities`),
the vocabulary `tooling validate` checks: :func:`severity_rows` refuses a schema value this table
does not define, and tests/test_status_strip.py holds the two to the same set.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tooling.analysis.status import severities
from tooling.messages import N_
from tooling.site.i18n import Edition

# Where the definitions are, from docs/; each severity is a heading there with its own anchor.
PAGE = "playbook/incident-response.md"


@dataclass(frozen=True)
class Severity:
    id: str
    means: str  # what makes an incident this severe
    woken: str  # who is woken
    pace: str  # how fast: acknowledgement, updates, escalation


DEFINITIONS = {s.id: s for s in (
    Severity("sev1", N_("The run is stopped or checkpoints are lost."),
             N_("The on-call person, at once, day or night; the escalation as well when nobody acknowledges "
                "within 15 minutes."),
             N_("Acknowledge within 5 minutes, an incident commander named within 15, an update every 30 "
                "minutes until it is mitigated.")),
    Severity("sev2", N_("The run is degraded: slow, restarting, or on fewer nodes."),
             N_("The on-call person, day or night."),
             N_("Acknowledge within 15 minutes, an update every hour; call the escalation when it is not "
                "mitigated within 4 hours.")),
    Severity("sev3", N_("A problem with a workaround in place."),
             N_("Nobody: the on-call person takes it up in working hours."),
             N_("Within one working day; handed over at the next shift change.")),
    Severity("sev4", N_("A near miss, or a cosmetic issue worth recording."),
             N_("Nobody."),
             N_("Recorded; looked at in the weekly review.")),
    Severity("unknown", N_("Not judged yet: an imported record, or a report without enough detail."),
             N_("As for sev2 until someone judges it."),
             N_("The on-call person sets a severity within the first five minutes of looking.")),
)}

# The incident roles: (anchor, name, what the role does).
ROLES = (
    ("incident-commander", N_("Incident commander"),
     N_("Runs the response: decides what is tried, when the run is stopped and who does what, and keeps the "
        "pager holder's other work away. For a sev1 or sev2 it is the on-call person until they hand the role "
        "over out loud. The commander does not debug.")),
    ("scribe", N_("Scribe"),
     N_("Keeps the incident's timeline as it happens: each command run and each finding, with its time, in the "
        "incident record. The postmortem is written from that timeline.")),
    ("comms", N_("Comms"),
     N_("Tells everyone else: keeps the run page's known issues and debugging in progress current and posts "
        "the state to the team at the severity's pace, so that nobody has to ask the people fixing it.")),
)

# The first five minutes after a page, in order: the playbook page and each run's first-response
# block show this list.
FIRST_FIVE_MINUTES = (
    N_("Acknowledge the page and say in the team channel that you have it: you are the incident commander "
       "until you hand it over."),
    N_("Read the run's status strip: is it stalled, degraded or ended, and how old are its heartbeat and its "
       "last good checkpoint?"),
    N_("If a metric looks wrong or bad checkpoints may be written, stop the line: the `STOP` file saves after "
       "the current step and exits. Anyone may; a false alarm costs minutes."),
    N_("Find the symptom and walk its ladder from step 1: on the node, `tooling triage SYMPTOM --incident RUN` "
       "runs the checks and drafts the incident with their results."),
    N_("Set the incident's severity; for a sev1 or sev2 name a scribe and a comms person, or call the "
       "escalation if you are alone."),
)

# The strip's words for a run's state, one for each of tooling.analysis.status.STATES (a test
# says so); freshness.js gets them from the page.
STATE_WORDS = {s: s for s in (N_("running"), N_("stalled"), N_("degraded"), N_("paused"), N_("stopped"),
                              N_("ended"))}


def severity_rows() -> list[Severity]:
    """Every severity `tooling validate` accepts, in the schema's order, with its definition."""
    missing = [s for s in severities() if s not in DEFINITIONS]
    if missing:
        raise LookupError(f"severities {missing} of incident.schema.json have no definition in {__name__}")
    return [DEFINITIONS[s] for s in severities()]


def template_globals(t: Edition) -> dict[str, Any]:
    """What the templates of the strip, the first-response block and the severity page read."""
    return dict(severity_page=PAGE, severity_rows=severity_rows(), roles=ROLES, first_five_minutes=FIRST_FIVE_MINUTES,
                state_words={state: t.gettext(words) for state, words in STATE_WORDS.items()})
