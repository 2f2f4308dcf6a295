"""`tooling job RUN -- TRAINER...`: run a SLURM job's trainer, its start, signals, requeue and end
recorded in the run record, the job requeued when the health check drains one of its nodes for a
hardware fault (see :mod:`tooling.slurm.wrap`); `--prolog`/`--epilog`: the same from the Prolog
and Epilog an admin installs (see :mod:`tooling.slurm.hooks`)."""
from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from tooling import arguments
from tooling.errors import UsageError
from tooling.now import Clock
from tooling.records.findings import excerpt
from tooling.slurm import signals
from tooling.slurm.signals import Catcher

NAME = "job"
HELP = ("run a SLURM job's trainer; its start, signals, requeue, end and a failure's draft incident go into the "
        "run record")
TRAILING = "trainer"  # takes the words after `--` that argparse leaves when options came before them
NODE_WATCH = 30.0  # seconds: one sinfo per look, against up to NCCL's timeout of a whole allocation idle


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", metavar="RUN", help="run id (runbooks/runs/<id>.yaml)")
    parser.add_argument("--log", type=Path, metavar="FILE",
                        help="the job's output, read for the failure when it fails (default: its StdOut, from scontrol)")
    parser.add_argument("--node-watch", type=arguments.non_negative, default=NODE_WATCH, metavar="SECONDS",
                        help="look at the job's nodes every SECONDS: one the health check drained for a hardware "
                             "fault is recorded and the job requeued, to start again on a spare (default: "
                             "%(default)g; 0: never)")
    hook = parser.add_mutually_exclusive_group()
    hook.add_argument("--prolog", dest="hook", action="store_const", const="prolog",
                      help="record the job's start, as slurmd's Prolog (scripts/slurm/prolog)")
    hook.add_argument("--epilog", dest="hook", action="store_const", const="epilog",
                      help="record the job's end, as slurmd's Epilog (scripts/slurm/epilog)")
    parser.add_argument("trainer", nargs="*", metavar="-- COMMAND", help="the trainer and its arguments, after --")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    return job_command(args, root=root, clock=clock)


def job_command(args: argparse.Namespace, *, root: Path, clock: Clock) -> int:
    """``clock`` stamps each event as it comes (a job runs for days); under --now every event is
    at that time (tests)."""
    command = args.trainer[1:] if args.trainer[:1] == ["--"] else args.trainer
    if args.hook is not None:
        if command:
            raise UsageError(f"--{args.hook}: takes no command; expected either --{args.hook} or -- COMMAND...")
        from tooling.slurm.hooks import run_hook
        return run_hook(args.hook, root=root, run=args.run, clock=clock)
    # caught before anything slow (the record's modules, the start's write), from the process's
    # start where it was run as a command (catch_early): a USR1 in the job's first moments must not kill it
    catcher = signals.EARLY or Catcher(clock)
    catcher.install()
    catcher.clock = clock
    if clock.fixed is not None:  # --now: every event at that time, the signals caught early too
        for arrival in catcher.arrived:
            arrival.at = clock.fixed
    try:
        if not command:
            raise UsageError("COMMAND: missing; expected the trainer after --, e.g. tooling job RUN -- python train.py")
        if shutil.which(command[0]) is None:  # refused before the job's start is recorded: no start without an end
            raise UsageError(f"COMMAND: {excerpt(command[0])} is not an executable on PATH or a path to one; "
                             "expected the trainer after --, e.g. tooling job RUN -- python train.py")
        from tooling.slurm.wrap import run_job
        return run_job(command, root=root, run=args.run, log=args.log, clock=clock, catcher=catcher,
                       watch_every=args.node_watch)
    finally:
        # this process's own command (caught early) exits next: nothing may end it by a late signal;
        # called in a process that goes on (tests, a library), its handlers are given back
        if catcher is signals.EARLY:
            catcher.retire()
        else:
            catcher.restore()
