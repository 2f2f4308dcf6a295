"""Schema checks: a compiled fast path for valid records, located messages for the rest."""
from __future__ import annotations

import difflib
import itertools
import json
from functools import lru_cache
from typing import Any, Callable, Iterator

import fastjsonschema
import jsonschema
from jsonschema.exceptions import ValidationError

from tooling.messages import counted
from tooling.records.findings import Finding, Severity, excerpt
from tooling.records.kinds import KINDS, is_kind
from tooling.records.locate import locate
from tooling.records.schema import schema_for

_TYPE_WORDS = {
    "string": "a string", "integer": "a whole number", "number": "a number",
    "boolean": "true or false", "array": "a list", "object": "a mapping", "null": "nothing",
}


@lru_cache(maxsize=None)
def _fast(kind: str) -> Callable[[Any], Any]:
    # Formats are left to the invalid-time rule, so both paths agree on what is valid.
    return fastjsonschema.compile(schema_for(kind), use_formats=False, use_default=False)


MAX_FINDINGS = 50  # per file: a record with 40,000 stray keys needs one page of output, not 40,000 lines


def _canonical(item: Any) -> str:
    """Equal JSON values give equal text (1 and 1.0 alike, keys in any order)."""
    return json.dumps(_integral(item), sort_keys=True, default=str)


def _integral(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


def first_repeat(items: list[Any]) -> Any | None:
    """The first item seen twice, in linear time (jsonschema's own check is quadratic on mappings)."""
    seen: set[str] = set()
    for item in items:
        key = _canonical(item)
        if key in seen:
            return item
        seen.add(key)
    return None


def _unique_items(validator: Any, unique: bool, instance: Any, schema: dict[str, Any]) -> Iterator[ValidationError]:
    if unique and validator.is_type(instance, "array") and first_repeat(instance) is not None:
        yield ValidationError("has non-unique elements")


_Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"uniqueItems": _unique_items})


@lru_cache(maxsize=None)
def _full(kind: str) -> Any:
    return _Validator(schema_for(kind))


def describe(value: Any) -> str:
    """A value as the user wrote it, for 'but received: ...' (long text cut short)."""
    if isinstance(value, str):
        return excerpt(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null (an empty value)"
    if isinstance(value, dict):
        return "a mapping" if value else "an empty mapping"
    if isinstance(value, list):
        return f"a list of {counted(len(value), 'item')}" if value else "an empty list"
    return str(value)


def check_record(path: str, data: Any) -> list[Finding]:
    if not isinstance(data, dict):
        return [Finding(path, 1, 1, "not-a-mapping",
                        f"expected a mapping of fields but received: {describe(data)}")]
    kind = data.get("kind")
    if not is_kind(kind):
        return [_kind_finding(path, data)]
    try:
        _fast(kind)(data)
        return []
    except fastjsonschema.JsonSchemaException:
        pass
    found = sorted(set(itertools.islice(_all_findings(path, kind, data), MAX_FINDINGS + 1)))
    if len(found) > MAX_FINDINGS:
        more = Finding(path, found[MAX_FINDINGS].line, found[MAX_FINDINGS].col, "too-many-findings",
                       f"more problems after the first {MAX_FINDINGS} are not shown; expected them fixed "
                       "first (or the file replaced)", found[MAX_FINDINGS].severity)
        found = [*found[:MAX_FINDINGS], more]
    return found


def _all_findings(path: str, kind: str, data: dict[str, Any]) -> Iterator[Finding]:
    for error in _full(kind).iter_errors(data):
        yield from _findings(path, kind, error)


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
                # only keys of about the right length can be its misspelling (and 40,000 keys stay cheap)
                strays = [k for k in value if k not in known and abs(len(str(k)) - len(name)) <= 3][:200]
                hint = difflib.get_close_matches(name, [str(k) for k in strays], n=1)
                extra = f" (found {excerpt(hint[0])}: a misspelling?)" if hint else ""
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
    match = difflib.get_close_matches(name, known, n=1, cutoff=0.6) if len(name) < 100 else []
    hint = f", did you mean '{match[0]}'?" if match else f"; expected a field of the {kind} schema"
    return Finding(path, *locate(path, [*keys, name], at_key=True), "unknown-field",
                   f"unknown field {excerpt(name)}{hint}", Severity.WARNING)


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
            return f"expected {side} {counted(bound, 'item')} {received}"
        case "minimum" | "maximum":
            side = ">=" if error.validator == "minimum" else "<="
            return f"expected a number {side} {bound} {received}"
        case "uniqueItems":
            return f"expected each item once but received {describe(first_repeat(value))} more than once"
    return excerpt(error.message, 200)


def field_errors(kind: str, data: dict[str, Any]) -> list[tuple[str, str]]:
    """(dotted field, message) for each schema error: for checking values before a file exists."""
    out: list[tuple[str, str]] = []
    for error in _full(kind).iter_errors(data):
        if error.validator in ("required", "additionalProperties"):
            out.append((".".join(map(str, error.absolute_path)) or kind, error.message))
        else:
            out.append((".".join(map(str, error.absolute_path)), _message(error)))
    return sorted(out)
