"""From the repository on disk to the analysis every report is made from."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

from tooling.analysis import Analysis, analyse
from tooling.errors import UserError
from tooling.records.layout import record_dirs
from tooling.rules.validate import validate


def load_analysis(root: Path, *, now: datetime) -> Analysis:
    """Validated records turned into the analysis; any validation error stops here."""
    report = validate(record_dirs(root), root=root, now=now)
    if report.errors:
        lines = "\n".join(f.format(relative_to=Path.cwd()) for f in report.errors[:50])
        more = f"\n... and {len(report.errors) - 50} more" if len(report.errors) > 50 else ""
        raise UserError(f"records do not validate:\n{lines}{more}")
    return analyse(report.records, now=now)
