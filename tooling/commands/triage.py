"""`tooling triage SYMPTOM`: walk that symptom's ladder on this machine, cheapest check first."""
from __future__ import annotations

import argparse
import shlex
import socket
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tooling import arguments
from tooling.errors import UserError
from tooling.now import Clock
from tooling.records.kinds import KINDS
from tooling.records.layout import SUFFIXES, path_of, shipped_record

if TYPE_CHECKING:
    from tooling.diagnose.triage import StepResult

NAME = "triage"
HELP = "walk a diagnostic ladder on this machine, cheapest check first"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("symptom", choices=["nan", "hang", "divergence", "crash", "checkpoint", "slowdown"])
    parser.add_argument("--pid", type=arguments.natural, help="PID of a training process, for the py-spy checks")
    parser.add_argument("--timeout", type=arguments.seconds, default=5.0, help="seconds per check (default: %(default)s)")
    parser.add_argument("--incident", dest="run", metavar="RUN", help="draft an incident for this run carrying the results")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    return triage_command(args.symptom, root=root, now=clock(), pid=args.pid, timeout=args.timeout,
                          incident_run=args.run, argv=argv)


def _print(result: StepResult, total: int) -> None:
    head = f"[{result.number}/{total}] {result.name}"
    print(f"{head}: {result.status}" + (f" ({result.command})" if result.command and result.status != "skipped" else ""))
    if result.status == "skipped":
        print(f"    skipped: {result.detail}")
    else:
        for line in result.detail.splitlines():
            print(f"    | {line}")
        print(f"    look for: {' '.join(result.look_for.split())} (clears: {result.clears})")
        if result.next_action:
            print(f"    next: {' '.join(result.next_action.split())}")


def load_ladder(root: Path, symptom: str, *, now: datetime) -> dict:
    """The ladder for ``symptom``, validated like every record: a broken one is reported where it breaks."""
    from tooling.rules.validate import validate

    folder = KINDS["ladder"].directory
    # the repository's own ladder overrides the one shipped with the package
    path = shipped_record(root, "ladder", symptom)
    if path is None:
        if not any((root / folder / f"{symptom}{suffix}").is_file() for suffix in SUFFIXES):
            raise UserError(f"{folder}/{symptom}.yaml: no such file; expected the {symptom} ladder there "
                            f"(one file per symptom in {folder}/)")
        path = path_of(root, symptom, kinds=["ladder"])
    report = validate([path], root=root, now=now)
    if report.errors:
        lines = "\n".join(f.format(relative_to=Path.cwd()) for f in report.errors[:20])
        raise UserError(f"the {symptom} ladder does not validate:\n{lines}")
    return report.records[0].data


def triage_command(symptom: str, *, root: Path, now: datetime, pid: int | None, timeout: float,
                   incident_run: str | None, argv: list[str]) -> int:
    from tooling.diagnose.triage import triage
    from tooling.writers.scaffold import new_incident, require_run

    if incident_run is not None:
        require_run(root, incident_run)
    ladder = load_ladder(root, symptom, now=now)
    print(f"{ladder['title']}: {len(ladder['steps'])} checks, cheapest first, on {socket.gethostname()}")
    results = triage(ladder, pid=pid, timeout=timeout)
    for result in results:
        _print(result, len(results))
    ran = [r for r in results if r.status != "skipped"]
    print(f"{len(ran)} checks ran, {len(results) - len(ran)} skipped")
    if incident_run is not None:
        created = new_incident(
            root=root, now=now, run=incident_run, severity="sev3", symptom=ladder["symptom"], layer="unknown",
            title=f"Triage of a {symptom} on {socket.gethostname()}: {len(ran)} checks ran",
            actions=[f"tooling {shlex.join(argv)}"],
            findings=[f"{r.name}: {r.status}: {' '.join(r.detail.split())[:300]}" for r in results])
        print(f"drafted {created.relative_to(root)}", file=sys.stderr)
    return 0
