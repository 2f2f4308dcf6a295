"""`tooling validate`: every record against its schema and the cross-record rules."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from tooling.records.validate import repository_files, validate


def validate_command(paths: Sequence[str], *, root: Path, strict: bool, jobs: int | None) -> int:
    targets = [Path(p) for p in paths] or [root / d for d in ("incidents", "runbooks") if (root / d).is_dir()]
    report = validate(targets, root=root, jobs=jobs)
    cwd = Path.cwd()
    for finding in report.problems(strict=strict):
        print(finding.format(relative_to=cwd))
    failed = report.failed(strict=strict)
    errors = sum(1 for f in report.problems(strict=strict) if f.severity.value == "error")
    warnings = len(report.findings) - errors if not strict else 0
    summary = f"{report.files} file{'s' if report.files != 1 else ''} checked"
    if report.findings:
        summary += f": {errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"
    print(summary, file=sys.stderr)
    return 1 if failed else 0


__all__ = ["validate_command", "repository_files"]
