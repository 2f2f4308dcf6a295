"""The shipped schemas: valid draft 2020-12, every field described (they feed the field reference)."""
from __future__ import annotations

from typing import Any, Iterator

import jsonschema
import pytest

from tooling.records.kinds import KINDS
from tooling.records.schema import schema_for


def _properties(schema: dict[str, Any], where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, spec in schema.get("properties", {}).items():
        yield f"{where}.{name}", spec
        yield from _properties(spec, f"{where}.{name}")
        if isinstance(spec.get("items"), dict):
            yield from _properties(spec["items"], f"{where}.{name}[]")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_schema_is_valid_and_every_field_is_described(kind: str) -> None:
    schema = schema_for(kind)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["kind"]["const"] == kind
    undescribed = [where for where, spec in _properties(schema, kind) if not spec.get("description")]
    assert undescribed == []
    assert all(d.get("description") for d in schema.get("$defs", {}).values())
