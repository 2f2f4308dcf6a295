"""What the status strip says of a run, and the commands of its first-response block.

The strip leads the home page and each run page: one line per active run with its state
(running, stalled, degraded, ended; a paused or stopped run says so), the ages of its heartbeat
and of its last good checkpoint, who is on call now and next with how to reach them, the
escalation, and its open incidents by severity. The state is worked out here for the build's
clock; the page also carries :attr:`RunStatus.base` (the state without the stall rule) and the
feed's heartbeat and threshold (:mod:`tooling.site.freshness`), from which
``docs/assets/javascripts/freshness.js`` works it out again with the reader's clock.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tooling.analysis.feed import Feed
from tooling.analysis.incidents import IncidentView
from tooling.records.model import parse_time
from tooling.records.runs import has_ended, is_live
from tooling.records.schema import field_spec
from tooling.resilience.switch import SAVE_FILE, STOP_FILE

# What the strip can say of a run; "stalled" is the stall rule of tooling.records.runs, the
# others the record's state ("ended": an ended state, or the scheduler's end as the last event).
STATES = ("running", "stalled", "degraded", "paused", "stopped", "ended")


@dataclass(frozen=True)
class Commands:
    """The first-response commands for one run, each a line to copy (placeholders in capitals)."""

    stop: str | None  # None: the record names no run_dir, so there is no file to write
    save: str | None
    drain: str | None  # None: the run is not on SLURM
    triage: str


@dataclass(frozen=True)
class RunStatus:
    active: bool  # a live run: one line of the home page's strip
    base: str  # the state without the stall rule: what the reader's browser starts from
    state: str  # one of STATES, by the build's clock
    checkpoint_at: datetime | None  # when the last good checkpoint was saved, if the record says
    checkpoint_age: timedelta | None
    open_by_severity: list[tuple[str, list[IncidentView]]]  # the schema's order; severities with none left out
    escalation: str | None
    contacts: dict[str, str] = field(default_factory=dict)  # person -> how to reach them
    commands: Commands | None = None


def severities() -> list[str]:
    """The incident schema's severities, in its order: the one vocabulary of `tooling validate`,
    the severity page and the strip."""
    return list(field_spec("incident", "severity")["enum"])


def base_state(run: dict[str, Any]) -> str:
    """The run's state as the strip says it before the stall rule."""
    if has_ended(run):
        return "ended"
    state = run.get("state")
    return state if state in ("degraded", "paused", "stopped") else "running"


def by_severity(incidents: list[IncidentView]) -> list[tuple[str, list[IncidentView]]]:
    order = severities()
    ranked = sorted(incidents, key=lambda v: (order.index(v.data["severity"]), v.id))
    return [(s, [v for v in ranked if v.data["severity"] == s]) for s in order
            if any(v.data["severity"] == s for v in ranked)]


def commands(run: dict[str, Any]) -> Commands:
    """The lines of the first-response block: the switch's files in the run's directory (its
    names from tooling.resilience.switch), the SLURM drain, the triage of a symptom."""
    folder = run.get("run_dir")
    stop = f"touch {shlex.quote(folder.rstrip('/') + '/' + STOP_FILE)}" if folder else None
    save = f"touch {shlex.quote(folder.rstrip('/') + '/' + SAVE_FILE)}" if folder else None
    scheduler = str(run.get("cluster", {}).get("scheduler", "slurm")).lower()
    reason = shlex.quote(f"{run['id']}: REASON")
    drain = f"scontrol update nodename=NODE state=drain reason={reason}" if scheduler == "slurm" else None
    return Commands(stop, save, drain, f"tooling triage SYMPTOM --incident {run['id']}")


def status_of(run: dict[str, Any], feed: Feed | None, open_incidents: list[IncidentView], *,
              now: datetime) -> RunStatus:
    base = base_state(run)
    checkpoint = run.get("last_good_checkpoint", {})
    saved = parse_time(checkpoint.get("saved_at")) if checkpoint else None
    oncall = run.get("oncall", {})
    return RunStatus(
        active=is_live(run), base=base,
        state="stalled" if base != "ended" and feed is not None and feed.stalled else base,
        checkpoint_at=saved, checkpoint_age=max(now - saved, timedelta(0)) if saved is not None else None,
        open_by_severity=by_severity(open_incidents), escalation=oncall.get("escalation"),
        contacts={c["person"]: c["contact"] for c in oncall.get("contacts", [])}, commands=commands(run))
