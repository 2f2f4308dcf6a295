"""`tooling new-postmortem INCIDENT-ID...`: a blameless postmortem draft."""
from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path

from tooling.now import Clock

NAME = "new-postmortem"
HELP = "scaffold incidents/PM-NNNN.yaml for incidents"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("incidents", nargs="+", metavar="INCIDENT-ID")
    parser.add_argument("--title")
    parser.add_argument("--author", action="append", dest="authors", metavar="NAME")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    return new_postmortem_command(args.incidents, root=root, now=clock(), title=args.title, authors=args.authors)


def new_postmortem_command(incidents: list[str], *, root: Path, now: datetime, title: str | None,
                           authors: list[str] | None) -> int:
    from tooling.writers.scaffold import new_postmortem

    path = new_postmortem(root=root, now=now, incidents=incidents, title=title, authors=authors)
    print(f"created {path.relative_to(root)}")
    return 0
