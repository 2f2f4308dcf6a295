"""`tooling set RECORD-ID FIELD=VALUE...`: edit a record without losing its comments."""
from __future__ import annotations

from pathlib import Path

from tooling.records.edit import find_record, parse_assignment, set_fields
from tooling.records.validate import repository_records


def set_command(record_id: str, assignments: list[str], *, root: Path) -> int:
    path = find_record(root, record_id)
    parsed = [parse_assignment(a) for a in assignments]
    set_fields(path, parsed, universe=repository_records(root))
    print(f"updated {path.relative_to(root)}")
    return 0
