"""`tooling validate`: every record against its schema and the cross-record rules."""
from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path
from typing import Sequence

from tooling import arguments
from tooling.messages import counted
from tooling.now import Clock
from tooling.records.findings import Severity
from tooling.records.layout import record_sources

NAME = "validate"
HELP = "check records against their schemas and each other"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", help="files or folders (default: incidents/ and runbooks/)")
    parser.add_argument("--strict", action="store_true", help="treat warnings as errors")
    parser.add_argument("-j", "--jobs", type=arguments.positive, help="worker processes (default: one per core)")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    return validate_command(args.paths, root=root, now=clock(), strict=args.strict, jobs=args.jobs)


def validate_command(paths: Sequence[str], *, root: Path, now: datetime, strict: bool, jobs: int | None) -> int:
    from tooling.catalogue.checks import holds
    from tooling.catalogue.local import repository
    from tooling.catalogue.modes import shipped_entries
    from tooling.rules.validate import validate

    targets = [Path(p) for p in paths] or record_sources(root)
    # a broken local catalogue is reported as its file's findings, the records checked meanwhile
    # against the shipped catalogue (its first problem would otherwise stop every check)
    with repository(root if holds(root, shipped_entries()) else None):
        report = validate(targets, root=root, now=now, jobs=jobs)
    problems = report.problems(strict=strict)
    cwd = Path.cwd()
    for finding in problems:
        print(finding.format(relative_to=cwd))
    errors = sum(1 for f in problems if f.severity is Severity.ERROR)
    warnings = sum(1 for f in problems if f.severity is Severity.WARNING)
    summary = counted(report.files, "file") + " checked"
    if errors or warnings:
        summary += f": {counted(errors, 'error')}, {counted(warnings, 'warning')}"
    if len(problems) > errors + warnings:
        summary += f" ({counted(len(problems) - errors - warnings, 'suggestion')})"
    print(summary, file=sys.stderr)
    return 1 if errors else 0
