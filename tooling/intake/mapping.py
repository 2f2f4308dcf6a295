"""The column-mapping file: read, checked against its schema and the repository, with located errors.

``tooling/schemas/import-mapping.schema.json`` says what a mapping holds. Beyond the schema,
every value a mapping gives (a value map's target, a default) must be one this repository's
incident schema accepts, and every column it names must be in the file being imported. Any
problem stops the import before a record is written.
"""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

import jsonschema

from tooling.catalogue.modes import catalogue
from tooling.errors import UserError
from tooling.intake import fields
from tooling.intake.dates import DateRules
from tooling.intake.values import key
from tooling.records.findings import Finding
from tooling.records.load import load_file
from tooling.records.locate import Keys, locate
from tooling.rules.schema_rules import describe, field_errors

# A record every value is tried in: the errors that name the field are that value's.
_PROBE = {"kind": "incident", "id": "INC-0000", "title": "probe title", "status": "open", "severity": "unknown",
          "symptom": "other", "layer": "unknown", "detected_at": "2022", "scope": "cluster", "cluster": "probe"}


@dataclass
class Mapping:
    columns: dict[str, list[str]] = field(default_factory=dict)  # field -> source columns
    values: dict[str, dict[str, str]] = field(default_factory=dict)  # field -> {key(theirs): ours}
    separators: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)
    dates: DateRules = DateRules()
    path: Path | None = None  # None: no mapping file, columns named like fields feed them
    usual: dict[str, str] = field(default_factory=dict)  # column -> field it feeds by a usual name


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    return json.loads(resources.files("tooling.schemas").joinpath("import-mapping.schema.json").read_text("utf-8"))


def load_mapping(path: Path, *, runs: tuple[str, ...]) -> Mapping:
    loaded = load_file(str(path))
    if loaded.findings:
        _stop(loaded.findings)
    data = loaded.data
    problems = [Finding(str(path), *locate(str(path), keys, at_key=at_key), "mapping", message)
                for keys, message, at_key in _schema_problems(data)]
    if not problems:
        problems = [Finding(str(path), *locate(str(path), keys), "mapping", message)
                    for keys, message in _value_problems(data, runs)]
    if problems:
        _stop(problems)
    dates = data.get("dates", {})
    return Mapping(
        columns={f: [c] if isinstance(c, str) else list(c) for f, c in data.get("columns", {}).items()},
        values={f: {key(str(k)): v for k, v in m.items()} for f, m in data.get("values", {}).items()},
        separators=dict(data.get("separators", {})), defaults=dict(data.get("defaults", {})),
        dates=DateRules(dates.get("timezone"), dates.get("day_first")), path=path)


def _stop(findings: list[Finding]) -> None:
    lines = "\n".join(f.format(relative_to=Path.cwd()) for f in sorted(findings))
    raise UserError(f"the mapping is not valid:\n{lines}\n(nothing was imported)")


def _schema_problems(data: Any) -> Iterator[tuple[Keys, str, bool]]:
    validator = jsonschema.Draft202012Validator(schema())
    for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        keys = list(error.absolute_path)
        if error.validator == "additionalProperties":
            known = list(error.schema.get("properties", {}))
            for name in error.instance:
                if name not in known:
                    yield [*keys, name], _unknown(str(name), known), True
        elif error.validator == "type":
            yield keys, f"expected {_words(error.validator_value)} but received: {describe(error.instance)}", False
        elif error.validator in ("pattern", "oneOf"):
            wanted = error.schema.get("description") or "another value"
            yield keys, f"expected {wanted} but received: {describe(error.instance)}", False
        else:
            yield keys, f"{error.message}", False


def _unknown(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else f"expected one of: {', '.join(known)}"
    return f"unknown key {name!r}; {hint}"


def _words(kind: Any) -> str:
    words = {"object": "a mapping", "string": "text", "array": "a list", "boolean": "true or false"}
    return " or ".join(words.get(k, k) for k in ([kind] if isinstance(kind, str) else kind))


def _value_problems(data: dict[str, Any], runs: tuple[str, ...]) -> Iterator[tuple[Keys, str]]:
    for name, table in data.get("values", {}).items():
        for theirs, ours in table.items():
            problem = value_problem(name, ours, runs)
            if problem:
                yield ["values", name, theirs], f"values.{name} maps {theirs!r} to {ours!r}: {problem}"
    for name, value in data.get("defaults", {}).items():
        for index, item in enumerate(value if isinstance(value, list) else [value]):
            problem = value_problem(name, item, runs)
            if problem:
                where = ["defaults", name, index] if isinstance(value, list) else ["defaults", name]
                yield where, f"defaults.{name} {item!r}: {problem}"


def value_problem(name: str, value: str, runs: tuple[str, ...]) -> str | None:
    """Why ``value`` cannot be the value of field ``name`` here, or None when it can."""
    if name == "run":
        return None if value in runs else f"no such run; expected one of: {list(runs)}"
    if name == "failure_mode":
        return None if catalogue().get(value) else "not a failure mode of the catalogue"
    probe = {**_PROBE, name: [value] if name == "tags" else value}
    errors = [message for where, message in field_errors("incident", probe) if where.split(".")[0] == name]
    return errors[0] if errors else None


def bind(mapping: Mapping, columns: list[str], source: str) -> Mapping:
    """The mapping with every column it names found in the file (or located errors), and the
    file's columns named like fields feeding those fields where the mapping says nothing."""
    problems: list[Finding] = []
    bound: dict[str, list[str]] = {}
    for name, wanted in mapping.columns.items():
        for index, column in enumerate(wanted):
            found = _column(column, columns)
            if found is None:
                keys: Keys = ["columns", name] + ([index] if len(wanted) > 1 else [])
                problems.append(Finding(str(mapping.path), *locate(str(mapping.path), keys), "mapping",
                                        f"column {column!r} is not in {source}; expected one of: {columns}"))
            else:
                bound.setdefault(name, []).append(found)
    if problems:
        _stop(problems)
    used = {c for cs in bound.values() for c in cs}
    for column in columns:
        name = fields.normal(column)
        if column not in used and name in fields.mappable() and name not in bound:
            bound[name] = [column]
    usual = _usual(columns, bound)
    for column, name in usual.items():
        bound[name] = [column]
    return Mapping(bound, mapping.values, mapping.separators, mapping.defaults, mapping.dates, mapping.path,
                   usual)


def _usual(columns: list[str], bound: dict[str, list[str]]) -> dict[str, str]:
    """Columns left over that feed a field nothing feeds yet by a usual name ("Date", "Host"):
    the first such column of each field, so that "Date" and "When" do not both claim it."""
    used = {c for cs in bound.values() for c in cs}
    found: dict[str, str] = {}
    for column in columns:
        name = fields.usual_name(column)
        if column not in used and name is not None and name not in bound and name not in found.values():
            found[column] = name
    return found


def _column(wanted: str, columns: list[str]) -> str | None:
    if wanted in columns:
        return wanted
    loose = [c for c in columns if fields.normal(c) == fields.normal(wanted)]
    return loose[0] if len(loose) == 1 else None
