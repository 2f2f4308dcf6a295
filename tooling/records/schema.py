"""Schema checks: a compiled fast path for valid records, located messages for the rest."""
from __future__ import annotations

import difflib
import json
from functools import lru_cache
from importlib import resources
from typing import Any, Callable, Iterator

import fastjsonschema
import jsonschema

from tooling.records.findings import Finding, Severity
from tooling.records.kinds import KINDS
from tooling.records.load import locate

_TYPE_WORDS = {
    "string": "a string", "integer": "a whole number", "number": "a number",
    "boolean": "true or false", "array": "a list", "object": "a mapping", "null": "nothing",
}


@lru_cache(maxsize=None)
def schema_for(kind: str) -> dict[str, Any]:
    text = resources.files("tooling.schemas").joinpath(KINDS[kind].schema_file).read_text("utf-8")
    return json.loads(text)


@lru_cache(maxsize=None)
def _fast(kind: str) -> Callable[[Any], Any]:
    # Formats are left to the invalid-time rule, so both paths agree on what is valid.
    return fastjsonschema.compile(schema_for(kind), use_formats=False, use_default=False)


@lru_cache(maxsize=None)
def _full(kind: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema_for(kind))


def describe(value: Any) -> str:
    """A value as the user wrote it, for 'but received: ...'."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null (an empty value)"
    if isinstance(value, dict):
        return "a mapping" if value else "an empty mapping"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'s' * (len(value) != 1)}" if value else "an empty list"
    return str(value)


def check_record(path: str, data: Any) -> list[Finding]:
    if not isinstance(data, dict):
        return [Finding(path, 1, 1, "not-a-mapping",
                        f"expected a mapping of fields but received: {describe(data)}")]
    kind = data.get("kind")
    if kind not in KINDS:
        return [_kind_finding(path, data)]
    try:
        _fast(kind)(data)
        return []
    except fastjsonschema.JsonSchemaException:
        pass
    found: set[Finding] = set()
    for error in _full(kind).iter_errors(data):
        found.update(_findings(path, kind, error))
    return sorted(found)


def _kind_finding(path: str, data: dict[str, Any]) -> Finding:
    expected = list(KINDS)
    if "kind" not in data:
        return Finding(path, *locate(path, []), "missing-field",
                       f"missing required field 'kind'; expected one of: {expected}")
    return Finding(path, *locate(path, ["kind"]), "invalid-value",
                   f"Expected one of: {expected} but received: {describe(data['kind'])}")


def _findings(path: str, kind: str, error: jsonschema.ValidationError) -> Iterator[Finding]:
    keys = list(error.absolute_path)
    schema, value, check = error.schema, error.instance, error.validator
    if check == "required":
        known = set(schema.get("properties", {}))
        for name in error.validator_value:
            if name not in value:
                strays = [k for k in value if k not in known]
                hint = difflib.get_close_matches(name, strays, n=1)
                extra = f" (found '{hint[0]}': a misspelling?)" if hint else ""
                yield Finding(path, *locate(path, keys, at_key=True), "missing-field",
                              f"missing required field '{name}'{extra}")
        return
    if check == "additionalProperties":
        known = list(schema.get("properties", {}))
        for name in value:
            if name not in known:
                yield _unknown_field(path, kind, keys, str(name), known)
        return
    yield Finding(path, *locate(path, keys), _RULES.get(check, "schema"), _message(error))


def _unknown_field(path: str, kind: str, keys: list[Any], name: str, known: list[str]) -> Finding:
    match = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f", did you mean '{match[0]}'?" if match else f"; expected a field of the {kind} schema"
    return Finding(path, *locate(path, [*keys, name], at_key=True), "unknown-field",
                   f"unknown field '{name}'{hint}", Severity.WARNING)


_RULES = {
    "enum": "invalid-value", "const": "invalid-value", "type": "wrong-type",
    "pattern": "invalid-format", "format": "invalid-format",
    "minLength": "invalid-length", "maxLength": "invalid-length",
    "minItems": "invalid-length", "maxItems": "invalid-length",
    "minimum": "out-of-range", "maximum": "out-of-range",
    "exclusiveMinimum": "out-of-range", "exclusiveMaximum": "out-of-range",
    "uniqueItems": "duplicate-item",
}


def _message(error: jsonschema.ValidationError) -> str:
    schema, value, bound = error.schema, error.instance, error.validator_value
    received = f"but received: {describe(value)}"
    match error.validator:
        case "enum":
            return f"Expected one of: {list(bound)} {received}"
        case "const":
            return f"Expected one of: {[bound]} {received}"
        case "type":
            wanted = " or ".join(_TYPE_WORDS.get(t, t) for t in ([bound] if isinstance(bound, str) else bound))
            return f"expected {wanted} {received}"
        case "pattern":
            return f"expected {schema.get('description') or f'text matching {bound!r}'} {received}"
        case "minLength" | "maxLength":
            side = "at least" if error.validator == "minLength" else "at most"
            return f"expected {side} {bound} characters {received}"
        case "minItems" | "maxItems":
            side = "at least" if error.validator == "minItems" else "at most"
            return f"expected {side} {bound} item{'s' if bound != 1 else ''} {received}"
        case "minimum" | "maximum":
            side = ">=" if error.validator == "minimum" else "<="
            return f"expected a number {side} {bound} {received}"
        case "uniqueItems":
            seen: list[Any] = []
            twice = next((item for item in value if item in seen or seen.append(item)), None)
            return f"expected each item once but received {describe(twice)} more than once"
    return error.message


def field_errors(kind: str, data: dict[str, Any]) -> list[tuple[str, str]]:
    """(dotted field, message) for each schema error: for checking values before a file exists."""
    out: list[tuple[str, str]] = []
    for error in _full(kind).iter_errors(data):
        if error.validator in ("required", "additionalProperties"):
            out.append((".".join(map(str, error.absolute_path)) or kind, error.message))
        else:
            out.append((".".join(map(str, error.absolute_path)), _message(error)))
    return sorted(out)
