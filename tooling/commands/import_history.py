"""`tooling import FILE`: a team's incident history in, every guess and unmapped value reported."""
from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext
from datetime import datetime
from pathlib import Path

from tooling.messages import counted
from tooling.now import Clock

NAME = "import"
HELP = "bring a team's incident history in from CSV, JSONL or a markdown table"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, metavar="FILE")
    parser.add_argument("--mapping", type=Path, metavar="MAP.yaml", help="which column is which field, and how values map")
    parser.add_argument("--format", choices=["csv", "jsonl", "markdown"], help="(default: from the file name)")
    parser.add_argument("--dry-run", action="store_true", help="report what would be written, write nothing")
    where = parser.add_mutually_exclusive_group()  # as scan's: a logbook of one run or of one cluster
    where.add_argument("--run", help="the run of the rows that name none (the mapping's defaults.run)")
    where.add_argument("--cluster", help="file the rows that name no run under this cluster (defaults.cluster)")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    place = {name: value for name, value in (("run", args.run), ("cluster", args.cluster)) if value is not None}
    return import_command(args.file, root=root, now=clock(), mapping=args.mapping, fmt=args.format,
                          dry_run=args.dry_run, place=place)


def import_command(file: Path, *, root: Path, now: datetime, mapping: Path | None, fmt: str | None,
                   dry_run: bool, place: dict[str, str] | None = None) -> int:
    """``place``: {"run": id} or {"cluster": name} from the command line, in place of the
    mapping's defaults.run and defaults.cluster."""
    from tooling.intake.importing import carry_out, one_at_a_time, plan_import

    with nullcontext() if dry_run else one_at_a_time(root):  # a dry run writes nothing: no turn to take
        plan = plan_import(file, root=root, now=now, mapping_path=mapping, fmt=fmt, place=place or {})
        counts = carry_out(plan, root=root, now=now, dry_run=dry_run, say=print)
    rows = len(plan.drafts)
    new = rows - counts.already
    done = f"{new} would be created (dry run: nothing was written)" if dry_run else f"{len(counts.created)} created"
    span = f" ({counts.created[0]}..{counts.created[-1]})" if len(counts.created) > 1 else \
        f" ({counts.created[0]})" if counts.created else ""
    print(f"{plan.shown}: {counted(rows, 'row')}: {done}{span}, {counts.already} imported before; "
          f"{counted(counts.guesses, 'guess', 'guesses')}, {counted(counts.unmapped, 'unmapped value')}",
          file=sys.stderr)
    return 0
