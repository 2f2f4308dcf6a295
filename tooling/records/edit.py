"""Editing an existing record in place: round-trip, re-validate, then replace atomically."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from tooling.errors import UsageError, UserError
from tooling.records.atomic import replace_file
from tooling.records.crossref import check_all
from tooling.records.findings import Severity
from tooling.records.kinds import KINDS
from tooling.records.load import parse_text
from tooling.records.model import Record
from tooling.records import roundtrip
from tooling.records.schema import check_record, schema_for


def find_record(root: Path, record_id: str) -> Path:
    for directory in dict.fromkeys(k.directory for k in KINDS.values()):
        for suffix in (".yaml", ".yml"):
            path = root / directory / f"{record_id}{suffix}"
            if path.is_file():
                return path
    raise UserError(f"no record with id '{record_id}' under {root}")


def parse_assignment(text: str) -> tuple[list[str], Any]:
    """``a.b=value`` -> (['a', 'b'], value parsed as a YAML scalar or collection)."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise UsageError(f"expected FIELD=VALUE but received: {text!r}")
    try:
        value = roundtrip.load_value(raw) if raw.strip() else ""
    except ValueError as exc:
        raise UsageError(f"{key}: {exc}; expected a YAML value") from None
    return key.split("."), value


def _insert_in_schema_order(document: Any, key: str, value: Any) -> None:
    """A new top-level field goes where the schema puts it, not at the end of the file."""
    order = list(schema_for(document.get("kind"))["properties"]) if document.get("kind") in KINDS else []
    if key not in order:
        document[key] = value
        return
    before = [k for k in order[: order.index(key)] if k in document]
    position = list(document).index(before[-1]) + 1 if before else 0
    document.insert(position, key, value)


def _assign(document: Any, keys: list[str], value: Any) -> None:
    if len(keys) == 1 and keys[0] not in document:
        _insert_in_schema_order(document, keys[0], value)
        return
    node = document
    for key in keys[:-1]:
        if key not in node:
            node[key] = {}
        node = node[key]
        if not isinstance(node, dict):
            raise UsageError(f"{'.'.join(keys)}: '{key}' is not a mapping")
    node[keys[-1]] = value


def edited_text(text: str, assignments: list[tuple[list[str], Any]]) -> str:
    document, yaml = roundtrip.load(text)
    for keys, value in assignments:
        _assign(document, keys, value)
    if document.get("kind") == "run" and not any(k == ["updated_at"] for k, _ in assignments):
        document["updated_at"] = datetime.now().astimezone().replace(microsecond=0).isoformat()
    return roundtrip.dump(document, yaml)


def set_fields(path: Path, assignments: list[tuple[list[str], Any]], *, universe: list[Record]) -> None:
    """Apply ``assignments``; write only if the result is still a valid record."""
    new_text = edited_text(path.read_text(encoding="utf-8"), assignments)
    loaded = parse_text(str(path), new_text)
    findings = loaded.findings or check_record(str(path), loaded.data)
    if not findings:
        record = Record(str(path), loaded.data)
        others = [r for r in universe if r.path != str(path)] + [record]
        findings = check_all([record], others)
    errors = [f"[{f.rule}] {f.message}" for f in findings if f.severity is Severity.ERROR]
    if errors:
        raise UserError(f"{path}: not changed, the edit would make it invalid: " + "; ".join(errors))
    replace_file(path, new_text)
