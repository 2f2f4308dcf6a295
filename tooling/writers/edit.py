"""Editing an existing record in place: round-trip, re-validate, then replace atomically.

Every writer of an existing record goes through :func:`set_fields`: it holds the record's lock
(so two ``tooling set`` calls take turns instead of one silently undoing the other), reads the
file, applies the assignments, validates the result completely (schema and cross-record rules,
whatever warnings the record already had) and replaces the file only if its content is still
what was read: a person's editor saving in between makes it read and apply again.
"""
from __future__ import annotations

import difflib
from collections.abc import Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any, Callable

from tooling.errors import UsageError, UserError
from tooling.fs.atomic import replace_file
from tooling.fs.lock import locked
from tooling.records import roundtrip
from tooling.records.findings import Finding, Severity, excerpt, shown_path
from tooling.records.kinds import is_kind
from tooling.records.model import Record
from tooling.records.reading import read_text
from tooling.records.schema import resolve, schema_for
from tooling.rules.others import Listed
from tooling.rules.record_check import Universe, findings, load_text

Assignment = tuple[list[str], Any]
ATTEMPTS = 5  # re-reads when the file keeps changing under us


class StillChanging(UserError):
    """The file changed under every attempt (a person's editor saving often): worth trying later."""


def parse_assignment(text: str) -> Assignment:
    """``a.b=value`` -> (['a', 'b'], value parsed as a YAML scalar or collection)."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise UsageError(f"expected FIELD=VALUE but received: {excerpt(text)}")
    try:
        value = roundtrip.load_value(raw) if raw.strip() else ""
    except ValueError as exc:
        expected = "" if "; expected" in str(exc) else "; expected a YAML value"
        raise UsageError(f"{excerpt(key)}: {exc}{expected}") from None
    return key.split("."), value


def _insert_in_schema_order(document: Any, key: str, value: Any) -> None:
    """A new top-level field goes where the schema puts it, not at the end of the file."""
    order = list(schema_for(document.get("kind"))["properties"]) if is_kind(document.get("kind")) else []
    if key not in order:
        document[key] = value
        return
    before = [k for k in order[: order.index(key)] if k in document]
    position = list(document).index(before[-1]) + 1 if before else 0
    document.insert(position, key, value)


def _plain(value: Any) -> Any:
    """Dates and times as their text, which records hold (and roundtrip writes plain)."""
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    return value


def _assign(document: Any, keys: list[str], value: Any) -> None:
    if not isinstance(document, dict):
        raise UsageError("the record is not a mapping of fields; fix it by hand first")
    value = _plain(value)
    if len(keys) == 1 and keys[0] not in document:
        _insert_in_schema_order(document, keys[0], value)
        return
    node = document
    for key in keys[:-1]:
        if isinstance(node, dict) and key not in node:
            node[key] = {}
        node = node[_slot(node, key, keys)]
    slot = _slot(node, keys[-1], keys, appending=True)
    if isinstance(node, list) and slot == len(node):
        node.append(value)
    else:
        roundtrip.replace(node, slot, value)


def _slot(node: Any, key: str, keys: list[str], *, appending: bool = False) -> Any:
    """``key`` as an index into ``node``: a field of a mapping, a number for a list item
    (one past the end appends)."""
    if isinstance(node, dict):
        return key
    where = excerpt(".".join(keys))
    if isinstance(node, list):
        if not key.isdigit() or int(key) > len(node) - (0 if appending else 1):
            raise UsageError(f"{where}: expected an item number from 0 to {len(node) - (0 if appending else 1)} "
                             f"but received: {excerpt(key)}")
        return int(key)
    raise UsageError(f"{where}: {excerpt(key)} is inside a value that is neither a mapping nor a list")


def edited_text(text: str, assignments: list[Assignment], *, now: datetime) -> str:
    document, yaml = roundtrip.load(text)
    edit_document(document, assignments, now=now)
    return roundtrip.dump(document, yaml)


def edit_document(document: Any, assignments: list[Assignment], *, now: datetime) -> None:
    """Apply ``assignments`` to a document loaded with :func:`roundtrip.load` (a run's
    ``updated_at`` set to ``now`` unless assigned): for a caller that reads the document too."""
    for keys, value in assignments:
        unknown = typed_field_problem(document.get("kind") if isinstance(document, dict) else None, keys)
        if unknown is not None:
            raise UsageError(f"{unknown} (not changed)")
        _assign(document, keys, value)
    if document.get("kind") == "run" and not any(k == ["updated_at"] for k, _ in assignments):
        document["updated_at"] = _plain(now.replace(microsecond=0))


def set_fields(path: Path, assignments: list[Assignment], *, universe: Sequence[Record] | Universe, now: datetime,
               strict: bool = False) -> list[Finding]:
    """Apply ``assignments``; write only if the result is still a valid record, as :func:`rewrite`
    says. A field name the record's schema does not know is refused first: it is a typo on the
    command line, where validate's warning (a file may carry fields for other tools) does not apply."""
    return rewrite(path, lambda text: edited_text(text, assignments, now=now), universe=universe, now=now,
                   strict=strict)


def rewrite(path: Path, change: Callable[[str], str], *, universe: Sequence[Record] | Universe, now: datetime,
            lock_timeout: float = 30.0, strict: bool = False, warnings: bool = True) -> list[Finding]:
    """The one locked, compare-and-swap edit of an existing record: ``change`` maps the text as
    read to the text to write (through :mod:`roundtrip`); it runs again on a fresh read when the
    file changed meanwhile. Refused, with the file untouched, when the result has an error, as
    validate would say (:func:`tooling.rules.record_check.findings`); a warning the edit brings
    is refused only when ``strict`` (as validate --strict fails it). Returns the warnings the edit
    brought, for the caller to show. ``universe``: every record, or a
    :class:`~tooling.rules.others.Repository` that reads only the records the rules ask for.
    ``warnings`` False (and not ``strict``): a caller that does nothing with warnings, for whom
    none is looked for (returns [])."""
    others = Listed(universe) if isinstance(universe, Sequence) else universe
    wanted = warnings or strict
    name = str(path)
    with locked(path, timeout=lock_timeout):
        for _ in range(ATTEMPTS):
            before = _read(path)
            unloadable = load_text(name, before).findings
            if unloadable:
                raise UserError(f"{_named(unloadable[0])} (not changed: fix the file by hand first)")
            old = {(f.rule, f.message) for f in findings(name, before, others=others, now=now)} if wanted else set()
            after = change(before)
            found = findings(name, after, others=others, now=now, warnings=wanted)
            brought = [f for f in found if f.severity is Severity.WARNING and (f.rule, f.message) not in old]
            problems = [f for f in found if f.severity is Severity.ERROR] + (brought if strict else [])
            if problems:  # located in the file as it stays: the field, or as deep as it exists
                raise UserError("; ".join(_named(f) for f in problems)
                                + " (not changed: the edit would make the record invalid)")
            # compare, then swap: nobody (a person's editor, say) wrote it while we worked
            if replace_file(path, after, still=lambda: _read(path) == before):
                if not brought:  # the common write: no third look at the record
                    return []
                # located again in the file as it now is (a new field had no line before)
                return [f for f in findings(name, after, others=others, now=now)
                        if f.severity is Severity.WARNING and (f.rule, f.message) not in old]
    raise StillChanging(f"{shown_path(str(path), Path.cwd())}: not changed: the file changed {ATTEMPTS} times "
                        "while it was being edited; expected it to hold still (run the command again)")


def typed_field_problem(kind: Any, keys: list[str]) -> str | None:
    """Why ``keys`` (a dotted field typed on the command line) names no field of the ``kind``
    schema, or None where it does, or where the schema leaves the names open."""
    if not is_kind(kind):
        return None
    schema = schema_for(kind)
    spec, defs = schema, schema.get("$defs", {})
    for depth, key in enumerate(keys):
        spec = resolve(spec, defs)
        if key.isdigit() and "items" in spec:  # a list item: its schema is the items'
            spec = spec["items"] if isinstance(spec["items"], dict) else {}
            continue
        known = spec.get("properties")
        if known is None or (key not in known and spec.get("additionalProperties", True) is not False):
            return None  # names left open (a map of any keys, one of several shapes): the schema says
        if key not in known:
            match = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
            parent = ".".join(keys[:depth])
            meant = f"{parent}.{match[0]}" if parent and match else match[0] if match else ""
            where = excerpt(parent) if parent else f"the {kind} schema"
            return f"unknown field {excerpt('.'.join(keys))}" + (
                f", did you mean '{meant}'?" if meant else f"; expected a field of {where}")
        spec = known[key]
    return None


def _read(path: Path) -> str:
    text, problem = read_text(str(path))
    if problem is not None:
        raise UserError(_named(problem))
    assert text is not None
    return text


def _named(finding: Finding) -> str:
    """``path:line:col: [rule] message`` as validate prints it, the path relative to where we run."""
    return finding.as_error().format(relative_to=Path.cwd())
