"""`tooling validate`: every record against its schema and the cross-record rules."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from tooling.records.findings import Severity
from tooling.records.kinds import RECORD_DIRS
from tooling.records.validate import validate


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def validate_command(paths: Sequence[str], *, root: Path, strict: bool, jobs: int | None) -> int:
    targets = [Path(p) for p in paths] or [root / d for d in RECORD_DIRS if (root / d).is_dir()]
    report = validate(targets, root=root, jobs=jobs)
    problems = report.problems(strict=strict)
    cwd = Path.cwd()
    for finding in problems:
        print(finding.format(relative_to=cwd))
    errors = sum(1 for f in problems if f.severity is Severity.ERROR)
    summary = _plural(report.files, "file") + " checked"
    if problems:
        summary += f": {_plural(errors, 'error')}, {_plural(len(problems) - errors, 'warning')}"
    print(summary, file=sys.stderr)
    return 1 if errors else 0
