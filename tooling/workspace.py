"""From the repository on disk to the analysis every report is made from."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

from tooling.analysis import Analysis, analyse
from tooling.errors import UserError
from tooling.records.findings import Severity
from tooling.records.kinds import RECORD_DIRS
from tooling.records.validate import validate


def load_analysis(root: Path, *, now: datetime) -> Analysis:
    """Validated records turned into the analysis; any validation error stops here."""
    report = validate([root / d for d in RECORD_DIRS if (root / d).is_dir()], root=root)
    errors = [f for f in report.findings if f.severity is Severity.ERROR]
    if errors:
        lines = "\n".join(f.format(relative_to=Path.cwd()) for f in errors[:50])
        raise UserError(f"records do not validate:\n{lines}")
    return analyse(report.records, now=now)
