"""`tooling set RECORD-ID FIELD=VALUE...`: edit a record without losing its comments."""
from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path

from tooling.records.edit import parse_assignment, set_fields
from tooling.records.layout import path_of
from tooling.records.validate import repository_records


def set_command(record_id: str, assignments: list[str], *, root: Path, now: datetime) -> int:
    path = path_of(root, record_id)
    parsed = [parse_assignment(a) for a in assignments]
    set_fields(path, parsed, universe=repository_records(root), now=now)
    print(f"updated {path.relative_to(root)}")
    return 0


def run(args: argparse.Namespace, *, root: Path, now: datetime, argv: list[str]) -> int:
    return set_command(args.record, args.assignments, root=root, now=now)
