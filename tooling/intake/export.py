"""Every incident of the repository as JSON Lines: the fields as in the file, plus its path.

The repository is validated first (a broken one is the usual located error: an export is for
other tools, which should never have to cope with a record the schema refuses). Incidents come
in detection order, then by id; ``tooling import`` of the result with no mapping reproduces
the same field values.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tooling.errors import UserError
from tooling.records.layout import record_sources
from tooling.records.model import Record, parse_time
from tooling.rules.validate import validate

SHOWN_ERRORS = 50


def incidents(root: Path, *, now: datetime) -> list[Record]:
    """The repository's incidents in detection order; any validation error stops here."""
    report = validate(record_sources(root), root=root, now=now)
    if report.errors:
        lines = "\n".join(f.format(relative_to=Path.cwd()) for f in report.errors[:SHOWN_ERRORS])
        more = f"\n... and {len(report.errors) - SHOWN_ERRORS} more" if len(report.errors) > SHOWN_ERRORS else ""
        raise UserError(f"records do not validate, so nothing was exported:\n{lines}{more}")
    found = [r for r in report.records if r.kind == "incident"]
    never = datetime.min.replace(tzinfo=timezone.utc)
    return sorted(found, key=lambda r: (parse_time(r.data["detected_at"]) or never, r.id))


def as_object(record: Record, root: Path) -> dict[str, Any]:
    path = Path(record.path).resolve()
    try:
        shown = path.relative_to(root.resolve()).as_posix()
    except ValueError:
        shown = path.as_posix()
    return {"id": record.id, "path": shown, **{k: v for k, v in record.data.items() if k != "id"}}


def not_an_export(path: Path) -> int | None:
    """The first line of ``path`` that is not an incident as :func:`export_jsonl` writes one (a
    JSON object with kind incident, an id and a path), or None when every line is one: the file
    is an earlier export (an empty one held no incidents). Read to the end, not judged by its
    first line: a file that begins like an export may still be something else."""
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip() and not _exported(line):
                return number
    return None


def _exported(line: str) -> bool:
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return (isinstance(data, dict) and data.get("kind") == "incident" and isinstance(data.get("id"), str)
            and isinstance(data.get("path"), str))


def export_jsonl(root: Path, *, now: datetime) -> tuple[str, int]:
    """The JSON Lines text and how many incidents it holds."""
    records = incidents(root, now=now)
    lines = [json.dumps(as_object(r, root), ensure_ascii=False, default=str) for r in records]
    return "".join(line + "\n" for line in lines), len(lines)
