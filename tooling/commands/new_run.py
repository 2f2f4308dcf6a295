"""`tooling new-run NAME`: the live wiki page of a new training run."""
from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path

from tooling.now import Clock

NAME = "new-run"
HELP = "scaffold runbooks/runs/NAME.yaml, the live page of a training run"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="NAME", help="run id: lower-case letters, digits and dashes")
    parser.add_argument("--title")
    parser.add_argument("--owner")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    return new_run_command(args.id, root=root, now=clock(), title=args.title, owner=args.owner)


def new_run_command(name: str, *, root: Path, now: datetime, title: str | None, owner: str | None) -> int:
    from tooling.writers.scaffold import new_run

    path = new_run(root=root, now=now, name=name, title=title, owner=owner)
    print(f"created {path.relative_to(root)}")
    return 0
