"""The field reference: every schema field flattened into rows for one table per kind."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from tooling.records.kinds import KINDS
from tooling.records.schema import resolve, schema_for


@dataclass(frozen=True)
class FieldRow:
    path: str
    type: str
    required: bool
    description: str
    choices: list[str]


@dataclass(frozen=True)
class KindReference:
    name: str
    title: str
    description: str
    fields: list[FieldRow]


def _type(spec: dict[str, Any], defs: dict[str, Any]) -> str:
    if "const" in spec or "enum" in spec:
        return "choice"
    kind = spec.get("type", "any")
    if kind == "array":
        item = resolve(spec.get("items", {}), defs)
        return f"list of {_type(item, defs)}"
    return {"object": "mapping", "integer": "whole number", "boolean": "true/false"}.get(kind, kind)


def _rows(spec: dict[str, Any], defs: dict[str, Any], prefix: str) -> Iterator[FieldRow]:
    required = set(spec.get("required", []))
    for name, raw in spec.get("properties", {}).items():
        field = resolve(raw, defs)
        path = f"{prefix}{name}"
        choices = [field["const"]] if "const" in field else list(field.get("enum", []))
        yield FieldRow(path, _type(field, defs), name in required, field.get("description", ""), choices)
        yield from _rows(field, defs, f"{path}.")
        if field.get("type") == "array" and isinstance(field.get("items"), dict):
            yield from _rows(resolve(field["items"], defs), defs, f"{path}[].")


def field_reference() -> list[KindReference]:
    out = []
    for name in KINDS:
        schema = schema_for(name)
        out.append(KindReference(name, schema["title"], schema["description"],
                                 list(_rows(schema, schema.get("$defs", {}), ""))))
    return out
