"""`tooling report RUN --step N ...`: a training loop's progress or a scheduler event, from the shell.

For loops that are not Python (or not ours) and for hooks: it writes through the same function as
:class:`tooling.resilience.RunReporter` (:func:`tooling.writers.feed_writes.feed_run`), so a person's
edit of the record is never lost and ``updated_at`` is left to people.
"""
from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import Any

from tooling.errors import UsageError
from tooling.slurm.job import job_id as slurm_job_id
from tooling.writers.feed_writes import feed_run, step_values

PROGRESS = ("loss", "tokens", "tokens_per_s", "total_steps")
EVENT = ("job_id", "host", "exit_code", "state", "signal", "incident", "detail")
ONLY_FOR = {"exit_code": "end", "state": "end", "incident": "end", "signal": "signal"}


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _check(args: argparse.Namespace) -> None:
    """Options that only make sense together; said before anything is read or written."""
    def given(name: str) -> bool:
        return getattr(args, name) is not None

    for name in PROGRESS:
        if given(name) and not given("step"):
            raise UsageError(f"{flag(name)}: needs --step; expected the step this value belongs to")
    if given("checkpoint_step") != given("checkpoint_path"):
        missing = "--checkpoint-path" if given("checkpoint_step") else "--checkpoint-step"
        raise UsageError(f"{missing}: missing; expected --checkpoint-step and --checkpoint-path together")
    if args.checkpoint_verified and not given("checkpoint_step"):
        raise UsageError("--checkpoint-verified: needs --checkpoint-step and --checkpoint-path")
    for name in EVENT:
        if given(name) and not given("event"):
            raise UsageError(f"{flag(name)}: needs --event; expected --event start|signal|requeue|end")
    for name, kind in ONLY_FOR.items():
        if given(name) and args.event != kind:
            raise UsageError(f"{flag(name)}: only for --event {kind}, not --event {args.event}")
    if args.event == "signal" and not given("signal"):
        raise UsageError("--signal: missing; expected the signal's name with --event signal, e.g. --signal USR1")
    if not (given("step") or given("checkpoint_step") or given("event")):
        raise UsageError("nothing to report; expected --step, --checkpoint-step or --event")


def job_id(given: str | None) -> str:
    """--job-id, else this SLURM job's id (1234, or 1234_5 for an array task)."""
    if given:
        return given
    found = slurm_job_id()
    if not found:
        raise UsageError("--job-id: missing and not inside a SLURM job (no SLURM_JOB_ID); expected the job's id")
    return found


def values(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of feed_run that the options give."""
    out: dict[str, Any] = {}
    if args.step is not None:
        out["progress"], out["sample"] = step_values(args.step, total_steps=args.total_steps, loss=args.loss,
                                                     tokens=args.tokens, tokens_per_s=args.tokens_per_s)
    if args.checkpoint_step is not None:
        out["checkpoint"] = {"step": args.checkpoint_step, "path": args.checkpoint_path,
                             "verified": True if args.checkpoint_verified else None}
    if args.event is not None:
        event = {"kind": args.event, "job_id": job_id(args.job_id), "step": args.step,
                 **{name: getattr(args, name) for name in EVENT if name != "job_id"}}
        out["events"] = [{k: v for k, v in event.items() if v is not None}]
    return out


def report_command(args: argparse.Namespace, *, root: Path, now: datetime) -> int:
    _check(args)
    path = feed_run(root, args.run, now=now, sample_every=args.sample_every, **values(args))
    print(f"updated {path.relative_to(root)}")
    return 0


def run(args: argparse.Namespace, *, root: Path, now: datetime, argv: list[str]) -> int:
    return report_command(args, root=root, now=now)
