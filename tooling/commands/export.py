"""`tooling export --jsonl`: every incident, one JSON object per line, to a file or standard output."""
from __future__ import annotations

import argparse
import os
import stat
import sys
from datetime import datetime
from pathlib import Path

from tooling.errors import UsageError
from tooling.fs.atomic import replace_file
from tooling.messages import counted
from tooling.now import Clock
from tooling.records.kinds import RECORD_DIRS
from tooling.records.layout import record_stem

NAME = "export"
HELP = "write every incident as one JSON object per line"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--jsonl", action="store_true", required=True, help="JSON Lines (the only format so far)")
    parser.add_argument("--output", "-o", type=Path, metavar="FILE", help="(default, or -: standard output)")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    return export_command(root=root, now=clock(), output=args.output)


def _refuse_a_record(root: Path, output: Path) -> None:
    """An output that `tooling validate` would read as a record (a typo of -o, say) would
    replace that record with JSON Lines: refused before anything is read."""
    real = Path(os.path.realpath(output))
    folders = [Path(os.path.realpath(root / d)) for d in RECORD_DIRS]
    if record_stem(real.name) is not None and any(real.is_relative_to(f) for f in folders):
        raise UsageError(f"--output: {output} is a record file of the repository (under "
                         f"{', '.join(d + '/' for d in RECORD_DIRS)}); expected a file outside them "
                         "or a name that does not end in .yaml or .yml, such as incidents.jsonl")


def _refuse_what_is_not_an_export(output: Path) -> None:
    """Only an earlier export is replaced: `-o mkdocs.yml` (or any file a typo names) replaced
    the site's config with JSON Lines. A file that does not exist yet is made; a device or pipe
    is written to; a loop of links is the error of the file system."""
    from tooling.intake.export import not_an_export

    try:
        mode = os.stat(output).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        return
    line = not_an_export(output)
    if line is not None:
        raise UsageError(f"--output: {output} exists and is not an earlier export (its line {line} is not an "
                         "incident as export writes one), so it is not replaced; expected a new file or an earlier "
                         "export, such as incidents.jsonl")


def _special(output: Path) -> bool:
    """A device or a pipe (/dev/stdout, a FIFO): written to, never replaced by a file."""
    try:
        mode = os.stat(output).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def export_command(*, root: Path, now: datetime, output: Path | None) -> int:
    from tooling.intake.export import export_jsonl

    if output == Path("-"):  # `-o -`: standard output, as the help's default says; never a file named '-'
        output = None
    if output is not None:
        _refuse_a_record(root, output)
        _refuse_what_is_not_an_export(output)
    text, count = export_jsonl(root, now=now)
    if output is None:
        sys.stdout.write(text)
        return 0
    if _special(output):
        try:
            with open(output, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:  # said of the output, not of a file nobody named (/dev/full)
            raise OSError(exc.errno, exc.strerror, str(output)) from None
    else:
        replace_file(output, text)  # a reader never sees half an export; a failed one leaves the old file
    print(f"exported {counted(count, 'incident')} to {output}", file=sys.stderr)
    return 0
