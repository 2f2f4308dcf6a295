"""`tooling export --jsonl`: every incident, one JSON object per line, to a file or standard output."""
from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path

from tooling.fs.atomic import replace_file
from tooling.intake.export import export_jsonl


def export_command(*, root: Path, now: datetime, output: Path | None) -> int:
    text, count = export_jsonl(root, now=now)
    if output is None:
        sys.stdout.write(text)
        return 0
    replace_file(output, text)  # a reader never sees half an export; a failed one leaves the old file
    print(f"exported {count} incident{'s' * (count != 1)} to {output}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace, *, root: Path, now: datetime, argv: list[str]) -> int:
    return export_command(root=root, now=now, output=args.output)
