"""The end of a SLURM job in the run record: the end event, and for a failure, a draft incident.

One draft per failed end, filed as ``tooling scan`` files its drafts
(:mod:`tooling.writers.filing`): when the job's log shows a failure the catalogue knows, the
earliest one gives the incident its title, mode, signatures and times; otherwise the job's own
facts do (exit code, state, node). Either way the notes say which job it was, and the event
links the incident, so the timeline and the incident point at each other.
"""
from __future__ import annotations

import signal
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from tooling.logs.scan import scan_logs
from tooling.slurm.job import FAILED_STATES, Job
from tooling.writers.filing import SEVERITY, file_all, incident_values


def how(exit_code: int | None) -> str:
    """'exit code 137 (killed by SIGKILL)'; None: the trainer had not exited when the end was written."""
    if exit_code is None:
        return "no exit code (its trainer was still stopping)"
    text = f"exit code {exit_code}"
    if 128 < exit_code < 128 + 65:
        try:
            text += f" (killed by {signal.Signals(exit_code - 128).name})"
        except ValueError:
            pass
    return text


def end_event(job: Job, *, exit_code: int | None, state: str, step: int | None = None,
              incident: str | None = None) -> dict[str, Any]:
    return job.event("end", exit_code=exit_code, state=state, step=step, incident=incident)


def failed(state: str) -> bool:
    return state in FAILED_STATES


def incident_of(state: str, *, root: Path, now: datetime, run: str, job: Job, exit_code: int | None,
                log: Path | None, warn: Callable[[str], None]) -> str | None:
    """The id of the draft incident of an end in a failed state; None for any other end, or when it
    could not be filed (said with ``warn``: the end event is still worth writing without it)."""
    if not failed(state):
        return None
    try:
        return draft_failure(root=root, now=now, run=run, job=job, exit_code=exit_code, state=state, log=log)
    except Exception as exc:
        warn(f"could not draft the incident of job {job.job_id} (the event is written without it): {exc}")
        return None


def draft_failure(*, root: Path, now: datetime, run: str, job: Job, exit_code: int | None, state: str,
                  log: Path | None) -> str:
    """File the draft incident of a failed end; returns its id."""
    facts = (f"Drafted by tooling job: SLURM job {job.job_id} (SLURM_JOB_ID {job.slurm_id}, restart "
             f"{job.restart}) of run {run} ended {state} with {how(exit_code)} on {job.host}.")
    drafts = scan_logs([log], now=now).drafts if log is not None and log.is_file() else []
    if drafts:
        values = incident_values(min(drafts, key=lambda d: (d.detected_at is None, d.detected_at or now)))
        values["extra"]["notes"] = f"{facts} {values['extra']['notes']}"
    else:
        seen = "its log shows no failure the catalogue knows" if log is not None else "no log was found"
        values = {"title": f"SLURM job {job.job_id} {state.lower()} with {how(exit_code)} on {job.host}",
                  "symptom": "crash", "layer": "unknown", "nodes": [job.host],
                  "extra": {"notes": f"{facts} {seen.capitalize()}.",
                            "links": [{"title": f"job log: {log.name}", "url": str(log.resolve())}] if log else []}}
    created = file_all([{**values, "run": run, "severity": SEVERITY}], root=root, now=now)
    return created[0].stem
