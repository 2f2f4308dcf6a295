"""`tooling set RECORD-ID FIELD=VALUE...`: edit a record without losing its comments."""
from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path

from tooling.now import Clock
from tooling.records.layout import path_of

NAME = "set"
HELP = "change fields of a record in place, keeping its comments"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("record", metavar="RECORD-ID")
    parser.add_argument("assignments", nargs="+", metavar="FIELD=VALUE",
                        help="a field (dotted for nested) and a YAML value, e.g. status=resolved")
    parser.add_argument("--strict", action="store_true",
                        help="refuse an edit that brings a warning too, as validate --strict would fail it")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    return set_command(args.record, args.assignments, root=root, now=clock(), strict=args.strict)


def set_command(record_id: str, assignments: list[str], *, root: Path, now: datetime, strict: bool = False) -> int:
    from tooling.rules.others import Repository
    from tooling.writers.edit import parse_assignment, set_fields

    path = path_of(root, record_id)
    parsed = [parse_assignment(a) for a in assignments]
    # the record is checked as validate checks it, against the records its rules name (read by name)
    brought = set_fields(path, parsed, universe=Repository(root), now=now, strict=strict)
    print(f"updated {path.relative_to(root)}")
    for finding in brought:  # what validate will warn about from now on (with --strict the edit is refused)
        print(f"tooling: warning: {finding.as_error().format(relative_to=Path.cwd())}", file=sys.stderr)
    return 0
