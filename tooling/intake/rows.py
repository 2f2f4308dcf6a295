"""One row of a logbook as one draft incident: cells mapped, the row placed, gaps guessed, checked.

A draft holds every field its record will have and the report of how each was arrived at. Its
notes keep what the fields cannot: the description, every value that did not map, and the marker
``imported from FILE row N, content D`` by which a rerun knows the row is in already (row_identity.py:
the row's content, not its file and place).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from ruamel.yaml.scalarstring import LiteralScalarString

from tooling.intake.guesses import Guessing, complete, out_of_order
from tooling.intake.mapping import Mapping
from tooling.intake.notes import Note, raw, shown
from tooling.intake.row_identity import Identities, marker
from tooling.intake.table import EXTRA, Row
from tooling.intake.values import Context, convert
from tooling.records.model import parse_time, same_or_later
from tooling.records.schema import schema_for
from tooling.rules.schema_rules import field_errors
from tooling.rules.time_rules import EARLIEST, LATEST

JOINED = ("notes", "description", "root_cause", "impact.notes")  # text of several columns is joined
REFERENCES = ("repeat_of", "related", "not_repeat_of")


@dataclass
class RowDraft:
    line: int
    key: str  # 'row 7', or 'id "OPS-17"' when the logbook has an id column: for the report
    identity: str  # the digest of its content: what a rerun matches (row_identity.py)
    fields: dict[str, Any]
    references: dict[str, Any]  # as the logbook names them: translated to new ids when written
    source_id: str | None
    notes: list[Note]


@dataclass
class Reading:
    """What carries from row to row of one file."""

    name: str  # the file's name, as the marker records it
    mapping: Mapping
    ctx: Context
    now_year: int
    known: set[str] = field(default_factory=set)  # ids a reference may name (rows before this one)
    seen: set[str] = field(default_factory=set)  # the logbook ids of the rows before this one
    by_id: bool = False  # references name the logbook's ids (it has an id column), else incident ids
    previous: str | None = None  # the date of the row before
    identities: Identities = field(default_factory=Identities)


@dataclass
class Tally:
    """The report of one row, and the values its notes keep because no field took them."""

    line: int
    notes: list[Note] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)

    def guess(self, name: str, value: Any, why: str) -> None:
        self.notes.append(Note(self.line, "guess", name, shown(value), why))

    def unmapped(self, name: str, value: Any, why: str, *, keep_as: str | None = None) -> None:
        """A value that fits no field value: reported, and kept whole in the notes."""
        self.notes.append(Note(self.line, "unmapped", name, raw(value if isinstance(value, str) else
                                                                 json.dumps(value)), f"{why}; kept in notes"))
        self.kept.append(f"{keep_as or name}: {json.dumps(value, ensure_ascii=False)}")


def draft(row: Row, reading: Reading) -> RowDraft | str:
    """The row's draft, or why it cannot become a record at all (it names no place to file it)."""
    tally = Tally(row.line)
    identity = reading.identities.of(row.cells)
    values = _cells(row, reading, tally)
    source_id = _source_id(values.pop("id", None), reading, tally)
    description = values.pop("description", "")
    references = _references(values, source_id, reading, tally)
    _impact(values, tally)
    where = _place(values, reading.mapping.defaults)
    if where is None:
        return ("the row names no run of this repository and no cluster, and neither --run or --cluster nor "
                "the mapping's defaults.run or defaults.cluster says where it goes; expected one of them")
    tally.notes[:] = [replace(n, why=f"{n.why}; filed under {where} (the mapping's default)")
                      if (n.field, n.tag) == ("run", "unmapped") else n for n in tally.notes]
    _complete(values, description, where, reading, tally)
    key = f"id {json.dumps(source_id)}" if source_id is not None else f"row {row.line}"
    values["notes"] = _notes(values.get("notes", ""), description, tally.kept, marker(reading.name, key, identity))
    if source_id is not None:
        reading.known.add(source_id)
        reading.seen.add(source_id)
    return RowDraft(row.line, key, identity, values, references, source_id, tally.notes)


def _complete(values: dict[str, Any], description: str, where: str, reading: Reading, tally: Tally) -> None:
    """Defaults, dates in order, then the guesses for what is still missing, then the schema's word."""
    for name in ("reported_by", "tags"):
        if name not in values and name in reading.mapping.defaults:
            values[name] = reading.mapping.defaults[name]
    _when(values, reading, tally)
    for name, follows in out_of_order(values):
        order = "after" if name == "started_at" else "before"
        tally.unmapped(name, values.pop(name), f"{order} {follows} {values[follows]}")
    text = " ".join(str(t) for t in (values.get("title", ""), description, *values.get("keywords", []),
                                      values.get("root_cause", ""), values.get("notes", "")))
    given = values.get("title")
    guessing = Guessing(values, text, description, reading.mapping.defaults)
    complete(guessing, where=where)
    for name, value, why in guessing.guesses:
        tally.guess(name, value, why)
    if isinstance(given, str) and len(given) > 200:
        tally.kept.append(f"title (in full): {json.dumps(given, ensure_ascii=False)}")
    _check(values, tally)


def _cells(row: Row, reading: Reading, tally: Tally) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, columns in reading.mapping.columns.items():
        for column in columns:
            cell = row.cells.get(column)
            found = convert(name, cell, column, reading.ctx)
            if found.unmapped:
                tally.unmapped(name, cell, found.unmapped, keep_as=column)
            elif found.value is not None:
                if found.guess:
                    tally.guess(name, found.value, found.guess)
                _combine(values, name, found.value)
    if row.cells.get(EXTRA):
        tally.unmapped(EXTRA, " | ".join(row.cells[EXTRA]), "more cells than the header has columns")
    return values


def _combine(values: dict[str, Any], name: str, value: Any) -> None:
    if name not in values:
        values[name] = value
    elif isinstance(values[name], list) and isinstance(value, list):
        values[name] += [v for v in value if v not in values[name]]
    elif name in JOINED:
        values[name] = f"{values[name]}\n\n{value}"


def _source_id(value: Any, reading: Reading, tally: Tally) -> str | None:
    if value is None:
        return None
    if str(value) in reading.seen:
        tally.notes.append(Note(tally.line, "unmapped", "id", raw(str(value)), "the id of an earlier row as "
                                "well; this row is keyed by its row number instead"))
        return None
    return str(value)


def _references(values: dict[str, Any], own: str | None, reading: Reading, tally: Tally) -> dict[str, Any]:
    """References to rows before this one (by the logbook's ids) or to incidents that exist."""
    found: dict[str, Any] = {}
    what = "row before this one" if reading.by_id else "incident of this repository"
    for name in (n for n in REFERENCES if n in values):
        given = values.pop(name)
        named = [str(r) for r in (given if isinstance(given, list) else [given])]
        good = [r for r in named if r in reading.known and r != own]
        for bad in (r for r in named if r not in good):
            tally.unmapped(name, bad, f"names no {what}")
        if good:
            found[name] = good if isinstance(given, list) else good[0]
    return found


def _impact(values: dict[str, Any], tally: Tally) -> None:
    """impact.* cells into the impact mapping; no impact at all stays unknown, not zero."""
    impact = values.pop("impact", {})
    if not isinstance(impact, dict):
        tally.unmapped("impact", impact, "expected a mapping such as {\"gpu_hours_lost\": 12}")
        impact = {}
    for name in [n for n in values if n.startswith("impact.")]:
        impact[name.split(".", 1)[1]] = values.pop(name)
    values["impact"] = dict(impact)


def _place(values: dict[str, Any], defaults: dict[str, Any]) -> str | None:
    """Where the incident is filed: its run, else its cluster, else the mapping's default."""
    scope = values.pop("scope", None)
    if scope == "cluster" and values.get("cluster"):
        values["scope"] = scope
        return f"cluster {values['cluster']}"
    if "run" not in values and "cluster" not in values:
        for name in ("run", "cluster"):
            if name in defaults:
                values[name] = defaults[name]
                break
    if "run" in values:
        if scope == "run":  # said outright: kept, so that an export comes back as it went
            values["scope"] = scope
        return str(values["run"])
    if "cluster" in values:
        values["scope"] = "cluster"
        return f"cluster {values['cluster']}"
    return None


def _when(values: dict[str, Any], reading: Reading, tally: Tally) -> None:
    if "detected_at" not in values:
        year = reading.previous[:4] if reading.previous else str(reading.now_year)
        why = "the year of the row before" if reading.previous else "the year of the import"
        values["detected_at"] = year
        tally.guess("detected_at", year, f"no date that could be read in the row; {why}")
    reading.previous = values["detected_at"]


def _check(values: dict[str, Any], tally: Tally) -> None:
    """Drop what the schema refuses (a JSONL value of the wrong shape); required fields are ours."""
    required = set(schema_for("incident")["required"])
    while True:  # each round drops a field, so it ends
        errors = field_errors("incident", {"kind": "incident", "id": "INC-0000", **values})
        errors += [] if _timeline_ok(values) else [("timeline", "its times are not real or not in order")]
        if not errors:
            break
        where, message = errors[0]
        name = where.split(".")[0]
        assert name in values and name not in required, f"row {tally.line}: {where}: {message}"
        tally.unmapped(name, values.pop(name), f"not a valid {name}: {message}")
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


def _notes(theirs: str, description: str, kept: list[str], marker: str) -> str:
    parts = [theirs.strip(), description.strip() if description.strip() not in theirs else ""]
    if kept:
        parts.append("Not mapped on import: " + "; ".join(kept))
    text = "\n\n".join([p for p in parts if p] + [marker])
    # a block of text, as a person writes it; a tab inside a block would be a tab in the file,
    # which records refuse, so such text stays a quoted string
    block = "\n" in text and "\t" not in text and all(ln == ln.rstrip() for ln in text.split("\n"))
    return LiteralScalarString(text) if block else text
