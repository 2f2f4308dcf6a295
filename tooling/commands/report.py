"""`tooling report RUN --step N ...`: a training loop's progress or a scheduler event, from the shell.

For loops that are not Python (or not ours) and for hooks: it writes through the same function as
:class:`tooling.resilience.RunReporter` (:func:`tooling.writers.feed_writes.feed_run`), so a person's
edit of the record is never lost and ``updated_at`` is left to people. ``tooling report --serve`` is
that reporter's writer process for a training environment without the ``wiki`` extra: it answers the
reporter's writes, one JSON line each on stdin (:mod:`tooling.writers.feed_server`).
"""
from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import Any

from tooling import arguments
from tooling.errors import UsageError
from tooling.now import Clock
from tooling.records.runs import SAMPLE_EVERY

NAME = "report"
HELP = "record a run's progress, checkpoint or scheduler event in its run record (for non-Python loops and hooks)"
PROGRESS = ("loss", "tokens", "tokens_per_s", "total_steps")
EVENT = ("job_id", "host", "exit_code", "state", "signal", "incident", "detail")
KINDS = ("start", "signal", "drain", "requeue", "resume", "end")  # the run schema's feed.events kinds, in its order
ONLY_FOR = {"exit_code": ("end",), "state": ("end",), "incident": ("end", "drain"), "signal": ("signal",)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", metavar="RUN", nargs="?", help="run id (runbooks/runs/<id>.yaml)")
    parser.add_argument("--step", type=arguments.natural, help="the step reached")
    parser.add_argument("--loss", type=arguments.finite, help="training loss at that step")
    parser.add_argument("--tokens", type=arguments.natural, help="tokens seen so far")
    parser.add_argument("--tokens-per-s", type=arguments.non_negative, help="throughput, tokens per second for the whole job")
    parser.add_argument("--total-steps", type=arguments.positive, help="planned steps")
    parser.add_argument("--checkpoint-step", type=arguments.natural, help="step of the newest good checkpoint")
    parser.add_argument("--checkpoint-path", help="where that checkpoint is")
    parser.add_argument("--checkpoint-verified", action="store_true", help="its checksum was verified after writing")
    parser.add_argument("--event", choices=KINDS, help="a scheduler event (resume: the trainer's, from the checkpoint "
                                                      "of --step)")
    parser.add_argument("--job-id", help="the job's id (default: $SLURM_JOB_ID, or ARRAY_TASK for an array task)")
    parser.add_argument("--host", help="node of the event")
    parser.add_argument("--exit-code", type=int, help="exit code, for --event end (128+N for signal N)")
    parser.add_argument("--state", help="SLURM state, for --event end (COMPLETED, FAILED, TIMEOUT, ...)")
    parser.add_argument("--signal", help="signal name, for --event signal (USR1, TERM)")
    parser.add_argument("--incident", help="the incident drafted for a failed end, or the drained node's, for --event "
                                           "end or drain")
    parser.add_argument("--detail", help="anything else worth one line, for --event")
    parser.add_argument("--sample-every", type=arguments.seconds, default=SAMPLE_EVERY, metavar="SECONDS",
                        help="keep one progress sample per this many seconds (default: %(default)g)")
    parser.add_argument("--serve", action="store_true",
                        help="instead: write what a RunReporter of another environment sends, one JSON line each on "
                             "stdin, until stdin ends")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    if args.serve:
        return _serve(args)
    if args.run is None:
        raise UsageError("RUN: missing; expected the run id (runbooks/runs/<id>.yaml)")
    return report_command(args, root=root, now=clock())


def _serve(args: argparse.Namespace) -> int:
    """RunReporter's writer process, for a trainer whose environment cannot write records."""
    from tooling.writers.feed_server import main

    named = ("run", "step", *PROGRESS, "checkpoint_step", "checkpoint_path", "event", *EVENT)
    given = [name for name in named if getattr(args, name) is not None] + ["checkpoint_verified"] * args.checkpoint_verified
    if given:
        raise UsageError(f"{'RUN' if given[0] == 'run' else flag(given[0])}: not with --serve; expected --serve "
                         "alone (each request names its run and repository)")
    main()
    return 0


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
            raise UsageError(f"{flag(name)}: needs --event; expected --event {'|'.join(KINDS)}")
    for name, kinds in ONLY_FOR.items():
        if given(name) and args.event not in kinds:
            raise UsageError(f"{flag(name)}: only for --event {' or '.join(kinds)}, not --event {args.event}")
    if args.event == "resume" and not given("step"):
        raise UsageError("--step: missing; expected the step of the checkpoint resumed from with --event resume")
    if args.event == "signal" and not given("signal"):
        raise UsageError("--signal: missing; expected the signal's name with --event signal, e.g. --signal USR1")
    if not (given("step") or given("checkpoint_step") or given("event")):
        raise UsageError("nothing to report; expected --step, --checkpoint-step or --event")


def job_id(given: str | None) -> str:
    """--job-id, else this SLURM job's id (1234, or 1234_5 for an array task)."""
    from tooling.slurm.job import job_id as slurm_job_id

    if given:
        return given
    found = slurm_job_id()
    if not found:
        raise UsageError("--job-id: missing and not inside a SLURM job (no SLURM_JOB_ID); expected the job's id")
    return found


def values(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of feed_run that the options give."""
    from tooling.writers.feed_writes import step_values

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
    from tooling.writers.feed_writes import feed_run

    _check(args)
    path = feed_run(root, args.run, now=now, sample_every=args.sample_every, **values(args))
    print(f"updated {path.relative_to(root)}")
    return 0
