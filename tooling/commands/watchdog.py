"""`tooling watchdog --run RUN -- COMMAND...`: run a training job under the hang watchdog.

The job's ranks beat through :class:`tooling.resilience.Watchdog`; this command is the monitor
(:mod:`tooling.diagnose.monitor`). A healthy job ends as it would without it, with its own exit
code, and leaves nothing behind. When a rank stops beating for ``--timeout`` seconds, it keeps
every rank's stack and flight recorder in ``incidents/dumps/hang-<time>-<host>-<pid>/``, kills
every process of the job, drafts a hang incident that links those files, and exits 75
(:data:`tooling.resilience.watchdog.EXIT_HANG`) so that auto-resume restarts the job.
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import socket
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tooling import arguments
from tooling.errors import UsageError, UserError
from tooling.fs.atomic import create_file
from tooling.now import Clock
from tooling.records.findings import shown_path
from tooling.records.kinds import KINDS

if TYPE_CHECKING:
    from tooling.diagnose.capture import HangEvidence
    from tooling.diagnose.monitor import HeartbeatStall

NAME = "watchdog"
HELP = ("run a job under the hang watchdog: when its ranks stop beating, dump every rank's stack, draft a hang "
        "incident, kill the job, exit 75")
FR_ENTRIES = "2000"  # collectives each rank's flight recorder keeps, unless the job's environment says


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run", required=True, help="the run a hang incident is for (runbooks/runs/<id>.yaml)")
    parser.add_argument("--timeout", type=arguments.seconds, default=600.0, metavar="SECONDS",
                        help="longest time without a beat from some rank (default: %(default)g)")
    parser.add_argument("--startup-timeout", type=arguments.seconds, default=900.0, metavar="SECONDS",
                        help="longest time from the start to every rank's first beat (default: %(default)g)")
    parser.add_argument("--stacks", choices=["auto", "py-spy", "faulthandler"], default="auto",
                        help="how to take the stacks (default: py-spy, faulthandler where py-spy cannot attach)")
    parser.add_argument("--dir", type=Path, help="folder of the heartbeats (default: a temporary one, removed after)")
    parser.add_argument("job", nargs=argparse.REMAINDER, metavar="-- COMMAND...", help="the job: torchrun and its arguments")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    job = args.job[1:] if args.job[:1] == ["--"] else args.job
    return watchdog_command(root=root, clock=clock, run=args.run, job=job, timeout=args.timeout,
                            startup_timeout=args.startup_timeout, stacks=args.stacks, directory=args.dir)


def watchdog_command(*, root: Path, clock: Clock, run: str, job: list[str], timeout: float,
                     startup_timeout: float, stacks: str, directory: Path | None) -> int:
    from tooling.diagnose.monitor import Heartbeats, end_job, exit_code, supervise
    from tooling.resilience.watchdog import ENV_DIR, ENV_FR, EXIT_HANG
    from tooling.writers.scaffold import require_run

    if not job:
        raise UsageError("expected the job's command after --, e.g. tooling watchdog --run demo-7b -- "
                         "torchrun --nproc_per_node=4 train.py")
    require_run(root, run)  # said now, not after the hang the incident is for
    if shutil.which(job[0]) is None:
        raise UsageError(f"{job[0]}: no such command; expected the job's command after --")
    folder = directory.absolute() if directory else Path(tempfile.mkdtemp(prefix="tooling-watchdog-"))
    folder.mkdir(parents=True, exist_ok=True)
    poll = min(1.0, timeout / 10)
    env = {**os.environ, ENV_DIR: str(folder)}
    env.setdefault(ENV_FR, FR_ENTRIES)
    print(f"tooling watchdog: watching {folder} (timeout {timeout:g} s): {shlex.join(job)}", file=sys.stderr)
    heartbeats = Heartbeats(folder, timeout=timeout, startup_timeout=startup_timeout, started=time.monotonic())
    process, stall = supervise(job, heartbeats=heartbeats, env=env, poll=poll)
    if stall is None:
        killed, _ = end_job()
        if killed:
            print(f"tooling watchdog: killed {len(killed)} processes the job left behind", file=sys.stderr)
        if directory is None:
            shutil.rmtree(folder, ignore_errors=True)
        return exit_code(process)
    keep = _fire(root=root, clock=clock, run=run, stall=stall, folder=folder, stacks=stacks)
    if directory is None and not keep:
        shutil.rmtree(folder, ignore_errors=True)
    return EXIT_HANG


def _fire(*, root: Path, clock: Clock, run: str, stall: HeartbeatStall, folder: Path, stacks: str) -> bool:
    """Keep the evidence, end the job, draft the incident; True when the evidence had to stay in
    the heartbeat folder because the repository refused it."""
    from tooling.diagnose.capture import gather
    from tooling.diagnose.hang_report import SUMMARY, summary
    from tooling.diagnose.monitor import end_job
    from tooling.resilience.watchdog import EXIT_HANG

    print(f"tooling watchdog: {stall.describe()}; taking every rank's stack", file=sys.stderr)
    detected = clock()  # when the hang was seen, hours after the start
    incidents = root / KINDS["incident"].directory
    name = f"hang-{detected:%Y%m%dT%H%M%S}-{socket.gethostname()}-{os.getpid()}"
    fallback = False
    try:
        try:
            evidence = gather(stall.registrations, folder=incidents / "dumps" / name, tool=stacks)
        except OSError as exc:
            print(f"tooling watchdog: {exc}; keeping the dumps in {folder}", file=sys.stderr)
            evidence, fallback = gather(stall.registrations, folder=folder / name, tool=stacks), True
    finally:
        killed, left = end_job()  # whatever happened above, nothing of the job outlives the monitor
    create_file(evidence.folder / SUMMARY, summary(stall, evidence, killed=killed, left=left))
    print(f"tooling watchdog: dumps in {shown_path(evidence.folder, root)}/; ended the job "
          f"({len(killed)} processes killed); exit {EXIT_HANG}", file=sys.stderr)
    _draft(root=root, run=run, stall=stall, evidence=evidence, killed=killed, detected=detected,
           incidents=incidents)
    return fallback


def _draft(*, root: Path, run: str, stall: HeartbeatStall, evidence: HangEvidence, killed: list[int],
           detected: datetime, incidents: Path) -> None:
    from tooling.diagnose.hang_report import incident_fields
    from tooling.writers.scaffold import new_incident

    fields = incident_fields(stall, evidence, incident_dir=incidents, killed=killed, detected=detected)
    try:
        path = new_incident(root=root, now=detected, run=run, **fields)
    except UserError as exc:  # the job is over either way: the exit code must still say "hang"
        print(f"tooling watchdog: could not draft the incident: {exc}", file=sys.stderr)
        return
    print(f"tooling watchdog: drafted {shown_path(path, root)}", file=sys.stderr)
