"""`tooling set RECORD-ID FIELD=VALUE...`: edit a record without losing its comments."""
from __future__ import annotations

from pathlib import Path

from tooling.records.edit import find_record, parse_assignment, set_fields
from tooling.records.validate import check_files, repository_files
from tooling.records.model import Record


def set_command(record_id: str, assignments: list[str], *, root: Path) -> int:
    path = find_record(root, record_id)
    parsed = [parse_assignment(a) for a in assignments]
    universe = [Record(p, d) for p, d, _ in check_files(repository_files(root))
                if isinstance(d, dict) and isinstance(d.get("id"), str) and "kind" in d]
    set_fields(path, parsed, universe=universe)
    print(f"updated {path.relative_to(root)}")
    return 0
