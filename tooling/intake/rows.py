"""One row of a logbook as one draft incident: cells mapped, the row placed, gaps guessed, checked.

A draft holds every field its record will have and the report of how each was arrived at. Its
notes keep what the fields cannot: the description, every value that did not map, and the line
``imported from FILE row N`` (or ``id "X"`` when the logbook has an id column) by which a rerun
knows the row is in already.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tooling.intake import fields as schema_fields
from tooling.intake.formats import EXTRA, Row
from tooling.intake.guesses import Guessing, complete, out_of_order
from tooling.intake.mapping import Mapping
from tooling.intake.report import Note, raw, shown
from tooling.intake.values import Context, convert
from tooling.records.crossref import EARLIEST, LATEST
from tooling.records.model import parse_time, same_or_later
from tooling.records.schema import field_errors, schema_for

JOINED = ("notes", "description", "root_cause", "impact.notes")  # text of several columns is joined
REFERENCES = ("repeat_of", "related", "not_repeat_of")


@dataclass
class Draft:
    line: int
    key: str  # 'row 7', or 'id "OPS-17"' when the logbook has an id column
    fields: dict[str, Any]
    references: dict[str, Any]  # as the logbook names them: translated to new ids when written
    source_id: str | None
    notes: list[Note]


@dataclass
class Reading:
    """What carries from row to row of one file."""

    name: str  # the file's name, as the rerun key records it
    mapping: Mapping
    ctx: Context
    now_year: int
    known: set[str] = field(default_factory=set)  # ids a reference may name (rows before this one)
    by_id: bool = False  # references name the logbook's ids (it has an id column), else incident ids
    previous: str | None = None  # the date of the row before


def draft(row: Row, reading: Reading) -> Draft | str:
    """The row's draft, or why it cannot become a record at all (it names no place to file it)."""
    notes: list[Note] = []
    kept: list[str] = []  # 'Column: value' of everything that did not map, for the notes
    values = _cells(row, reading, notes, kept)
    source_id = _source_id(values.pop("id", None), row.line, reading, notes)
    description = values.pop("description", "")
    references = _references(values, source_id, reading, notes, kept, row.line)
    _impact(values)
    where = _place(values, reading.mapping.defaults)
    if where is None:
        return ("the row names no run of this repository and no cluster, and the mapping has no "
                "defaults.run or defaults.cluster; expected one of them")
    for name in ("reported_by", "tags"):
        if name not in values and name in reading.mapping.defaults:
            values[name] = reading.mapping.defaults[name]
    _when(values, reading, row.line, notes)
    for name in out_of_order(values):
        _drop(values, name, f"before the time it must follow", row.line, notes, kept)
    text = " ".join(str(t) for t in (values.get("title", ""), description, *values.get("keywords", []),
                                      values.get("root_cause", ""), values.get("notes", "")))
    guessing = Guessing(values, text, description, reading.mapping.defaults)
    given = values.get("title")
    complete(guessing, where=where)
    if isinstance(given, str) and len(given) > 200:
        kept.append(_kept("title (in full)", given))
    notes.extend(Note(row.line, "guess", f, shown(v), why) for f, v, why in guessing.guesses)
    _check(values, row.line, notes, kept)
    key = f"id {json.dumps(source_id)}" if source_id is not None else f"row {row.line}"
    values["notes"] = _notes(values.get("notes", ""), description, kept, f"imported from {reading.name} {key}")
    if source_id is not None:
        reading.known.add(source_id)
    return Draft(row.line, key, values, references, source_id, notes)


def _cells(row: Row, reading: Reading, notes: list[Note], kept: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, columns in reading.mapping.columns.items():
        for column in columns:
            cell = row.cells.get(column)
            found = convert(name, cell, column, reading.ctx)
            if found.unmapped:
                notes.append(Note(row.line, "unmapped", name, raw(cell), f"{found.unmapped}; kept in notes"))
                kept.append(_kept(column, cell))
            elif found.value is not None:
                if found.guess:
                    notes.append(Note(row.line, "guess", name, shown(found.value), found.guess))
                _combine(values, name, found.value)
    if row.cells.get(EXTRA):
        extra = row.cells[EXTRA]
        notes.append(Note(row.line, "unmapped", EXTRA, raw(" | ".join(extra)), "more cells than the header has columns; kept in notes"))
        kept.append(_kept(EXTRA, extra))
    return values


def _combine(values: dict[str, Any], name: str, value: Any) -> None:
    if name not in values:
        values[name] = value
    elif isinstance(values[name], list) and isinstance(value, list):
        values[name] += [v for v in value if v not in values[name]]
    elif name in JOINED:
        values[name] = f"{values[name]}\n\n{value}"


def _source_id(value: Any, line: int, reading: Reading, notes: list[Note]) -> str | None:
    if value is None:
        return None
    value = str(value)
    if value in reading.known:
        notes.append(Note(line, "unmapped", "id", raw(value), "the id of an earlier row as well; "
                          "this row is keyed by its row number instead"))
        return None
    return value


def _references(values: dict[str, Any], own: str | None, reading: Reading, notes: list[Note],
                kept: list[str], line: int) -> dict[str, Any]:
    """References to rows before this one (by the logbook's ids) or to incidents that exist."""
    found: dict[str, Any] = {}
    for name in REFERENCES:
        if name not in values:
            continue
        given = values.pop(name)
        named = [str(r) for r in (given if isinstance(given, list) else [given])]
        good = [r for r in named if r in reading.known and r != own]
        for bad in (r for r in named if r not in good):
            what = "row before this one" if reading.by_id else "incident of this repository"
            notes.append(Note(line, "unmapped", name, raw(bad), f"names no {what}; kept in notes"))
            kept.append(_kept(name, bad))
        if good:
            found[name] = good if isinstance(given, list) else good[0]
    return found


def _impact(values: dict[str, Any]) -> None:
    """impact.* cells into the impact mapping; no impact at all stays unknown, not zero."""
    impact = values.pop("impact", {})
    impact = dict(impact) if isinstance(impact, dict) else {"?": impact}  # not a mapping: _check drops it
    for name in [n for n in values if n.startswith("impact.")]:
        impact[name.split(".", 1)[1]] = values.pop(name)
    values["impact"] = impact


def _place(values: dict[str, Any], defaults: dict[str, Any]) -> str | None:
    """Where the incident is filed: its run, else its cluster, else the mapping's default."""
    if values.get("scope") == "cluster" and values.get("cluster"):
        return f"cluster {values['cluster']}"
    values.pop("scope", None)
    if "run" not in values and "cluster" not in values:
        for name in ("run", "cluster"):
            if name in defaults:
                values[name] = defaults[name]
                break
    if "run" in values:
        return str(values["run"])
    if "cluster" in values:
        values["scope"] = "cluster"
        return f"cluster {values['cluster']}"
    return None


def _when(values: dict[str, Any], reading: Reading, line: int, notes: list[Note]) -> None:
    if "detected_at" not in values:
        year = reading.previous[:4] if reading.previous else str(reading.now_year)
        why = "the year of the row before" if reading.previous else "the year of the import"
        values["detected_at"] = year
        notes.append(Note(line, "guess", "detected_at", year, f"no date that could be read in the row; {why}"))
    reading.previous = values["detected_at"]


def _drop(values: dict[str, Any], name: str, why: str, line: int, notes: list[Note], kept: list[str]) -> None:
    value = values.pop(name)
    notes.append(Note(line, "unmapped", name, raw(value if isinstance(value, str) else json.dumps(value)),
                      f"{why}; kept in notes"))
    kept.append(_kept(name, value))


def _check(values: dict[str, Any], line: int, notes: list[Note], kept: list[str]) -> None:
    """Drop what the schema refuses (a JSONL value of the wrong shape); required fields are ours."""
    required = set(schema_for("incident")["required"])
    while True:  # each round drops a field, so it ends
        errors = field_errors("incident", {"kind": "incident", "id": "INC-0000", **values})
        errors += [] if _timeline_ok(values) else [("timeline", "its times are not real or not in order")]
        if not errors:
            break
        where, message = errors[0]
        name = where.split(".")[0]
        assert name in values and name not in required, f"row {line}: {where}: {message}"
        _drop(values, name, f"not a valid {name}: {message}", line, notes, kept)
    values.setdefault("impact", {})


def _timeline_ok(values: dict[str, Any]) -> bool:
    """What validate's time rules ask of a timeline given whole (JSONL): real, sane, in order."""
    entries = values.get("timeline")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        return True  # the schema check speaks for the shape
    times = [e.get("at") for e in entries]
    real = [parse_time(t) for t in times]
    if any(t is None or not EARLIEST <= t.date() <= LATEST for t in real):
        return False
    return all(same_or_later(a, b) is not False for a, b in zip(times, times[1:]))


def _kept(column: str, value: Any) -> str:
    """A value that did not map, whole, as the notes keep it."""
    return f"{column}: {json.dumps(value, ensure_ascii=False)}"


def _notes(theirs: str, description: str, kept: list[str], marker: str) -> str:
    parts = [theirs.strip(), description.strip() if description.strip() not in theirs else ""]
    if kept:
        parts.append("Not mapped on import: " + "; ".join(kept))
    return "\n\n".join([p for p in parts if p] + [marker])
