"""The schema of each record kind (tooling/schemas/), as the store reads it: whole, or one field.

Checking a record against it is a rule (:mod:`tooling.rules.schema_rules`); knowing what a
field is (its type, its bounds, its order) is the store's.
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from tooling.records.kinds import KINDS


@lru_cache(maxsize=None)
def schema_for(kind: str) -> dict[str, Any]:
    text = resources.files("tooling.schemas").joinpath(KINDS[kind].schema_file).read_text("utf-8")
    return json.loads(text)


def resolve(spec: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """A property's schema with its local ``$ref`` (``#/$defs/name``) filled in; the property's
    own keywords (its description) win over the definition's."""
    if "$ref" in spec:
        return {**defs[spec["$ref"].rsplit("/", 1)[-1]], **{k: v for k, v in spec.items() if k != "$ref"}}
    return spec


def field_spec(kind: str, name: str) -> dict[str, Any]:
    """The resolved schema of the top-level field ``name`` of ``kind``."""
    schema = schema_for(kind)
    return resolve(schema["properties"][name], schema.get("$defs", {}))
