"""`tooling doctor`: what this repository overrides of the shipped playbook, which overrides are
stale after an upgrade, and what is missing; exit 1 with one line per problem."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tooling.messages import counted
from tooling.now import Clock

NAME = "doctor"
HELP = "list what this repository overrides of the shipped playbook, what is stale after an upgrade, what is missing"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    parser.add_argument("--relock", action="store_true",
                        help="after taking an upgrade's changes into the overrides: record the installed "
                             "playbook in .playbook.lock, so that they are no longer stale")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    return doctor_command(root=root, as_json=args.json, relock=args.relock)


def doctor_command(*, root: Path, as_json: bool, relock: bool) -> int:
    from tooling.site import doctor

    if relock and not doctor.is_shipped(root):
        print(f"wrote {doctor.relock(root)}", file=sys.stderr)
    health = doctor.doctor(root)
    if as_json:
        print(json.dumps(health.as_json(), ensure_ascii=False, indent=2))
    elif health.shipped:
        print(doctor.shipped_line())
    else:
        for override in health.overrides:
            print(override.line())
        for problem in health.problems:
            print(problem)
        summary = counted(len(health.overrides), "override")
        print(f"{summary}; " + (counted(len(health.problems), "problem") if health.problems else "healthy"),
              file=sys.stderr)
    return 1 if health.problems else 0
