"""A logbook file as rows of cells, each row knowing the line it starts on.

CSV: a header row, then one row per incident, in any dialect ``csv.Sniffer`` recognises
(comma, semicolon, tab or pipe; quoted cells may span lines); UTF-8, with or without a BOM.
JSONL: one JSON object per line; a line that is not one stops the whole import (every bad
line is listed) rather than being skipped, because a history with silent holes is worse than
an error fixed in a minute. Markdown: a GitHub pipe table (``\\|`` is a pipe inside a cell,
``<br>`` a line break), the first in the file whose header names a mapped column.
"""
from __future__ import annotations

import codecs
import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from tooling.errors import UsageError, UserError
from tooling.records.findings import Finding
from tooling.records.reading import position, read_regular

EXTRA = "(extra cells)"  # cells beyond the header: kept in notes, never silently dropped
SUFFIXES = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl",
            ".md": "markdown", ".markdown": "markdown"}
MAX_ERRORS = 20
MAX_BYTES = 64 << 20  # 100,000 incidents are about 50 MB: anything larger is not a logbook


@dataclass(frozen=True)
class Row:
    line: int
    cells: dict[str, Any]


@dataclass
class Table:
    columns: list[str]
    header_lines: dict[str, int]  # column -> the line that names it (a JSONL key: where first seen)
    rows: list[Row] = field(default_factory=list)


def format_of(path: Path, given: str | None) -> str:
    if given:
        return given
    found = SUFFIXES.get(path.suffix.lower())
    if found is None:
        raise UsageError(f"{path}: cannot tell the format from the name; expected a file ending in "
                         f".csv, .jsonl or .md, or --format csv|jsonl|markdown")
    return found


def read_table(path: Path, fmt: str, *, prefer: Iterable[str] = ()) -> Table:
    text = _text(path)
    if fmt == "csv":
        return _csv(path, text)
    if fmt == "jsonl":
        return _jsonl(path, text)
    return _markdown(path, text, set(prefer))


def _text(path: Path) -> str:
    """The logbook's text; a folder, a device (/dev/zero would be read for ever) or a file too
    large is refused before anything is read into memory."""
    raw = read_regular(str(path), MAX_BYTES)
    if isinstance(raw, Finding):
        if raw.rule == "not-a-file":
            raise UserError(f"{path}:1:1: [not-a-file] not a regular file (a folder, FIFO or device); "
                            "expected a logbook file (CSV, JSONL or a markdown table)")
        raise UserError(raw.format())
    if len(raw) > MAX_BYTES:
        raise UserError(f"{path}:1:1: [file-too-large] file is larger than {MAX_BYTES >> 20} MiB; "
                        "expected a logbook of at most that size (split it and import each part)")
    data = raw.removeprefix(codecs.BOM_UTF8)  # so that a bad byte's position counts from the text
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start].decode("utf-8", errors="replace")
        line, col = position(before, len(before))
        raise UserError(f"{path}:{line}:{col}: [not-utf8] invalid UTF-8 byte 0x{data[exc.start]:02x}; "
                        "expected UTF-8 text (save the file as UTF-8)") from None


def _dialect(text: str) -> type[csv.Dialect]:
    try:
        sniffed = csv.Sniffer().sniff(text[:65536], delimiters=",;\t|")
    except csv.Error:  # one column, or too little text to tell: the common dialect
        return csv.excel

    class Sniffed(csv.excel):  # the sniffer guesses doublequote from the sample alone; keep it on
        delimiter = sniffed.delimiter
        quotechar = sniffed.quotechar or '"'
        skipinitialspace = sniffed.skipinitialspace
    return Sniffed


def _csv(path: Path, text: str) -> Table:
    reader = csv.reader(io.StringIO(text, newline=""), _dialect(text))
    table: Table | None = None
    try:
        while True:
            start = reader.line_num + 1
            cells = next(reader, None)
            if cells is None:
                break
            if not cells:  # a blank line; a row of empty cells is reported by the import
                continue
            if table is None:
                table = _header(path, [c.strip() for c in cells], start)
            else:
                table.rows.append(Row(start, _cells(table.columns, cells)))
    except csv.Error as exc:
        raise UserError(f"{path}:{reader.line_num}: {exc}; expected CSV with a header row") from None
    if table is None:  # else every mapped column would be reported missing from an empty header
        raise UserError(f"{path}:1:1: [empty-file] no header row (the file is empty or only blank lines); "
                        "expected CSV with a header row naming the columns")
    return table


def _header(path: Path, names: list[str], line: int) -> Table:
    columns = [name or f"column {i}" for i, name in enumerate(names, 1)]
    seen: set[str] = set()
    for name in columns:
        if name in seen:
            raise UserError(f"{path}:{line}: column {name!r} appears twice in the header; "
                            "expected each column name once")
        seen.add(name)
    return Table(columns, {c: line for c in columns})


def _cells(columns: list[str], values: list[str]) -> dict[str, Any]:
    cells: dict[str, Any] = dict(zip(columns, values))
    if len(values) > len(columns):
        cells[EXTRA] = [v for v in values[len(columns):] if v.strip()]
    return cells


def _jsonl(path: Path, text: str) -> Table:
    table, errors = Table([], {}), []
    for number, line in enumerate(text.split("\n"), 1):  # not splitlines: U+2028 is text inside JSON
        if not line.strip():
            continue
        try:
            data = json.loads(line, parse_constant=_no_constant)
        except (json.JSONDecodeError, ValueError) as exc:
            col = getattr(exc, "colno", 1)
            errors.append(f"{path}:{number}:{col}: {getattr(exc, 'msg', exc)}; expected one JSON object per line")
            continue
        if not isinstance(data, dict):
            errors.append(f"{path}:{number}:1: a JSON {type(data).__name__}; expected one JSON object per line")
            continue
        for key in data:
            if key not in table.header_lines:
                table.columns.append(key)
                table.header_lines[key] = number
        table.rows.append(Row(number, data))
    if errors:
        more = f"\n... and {len(errors) - MAX_ERRORS} more" if len(errors) > MAX_ERRORS else ""
        raise UserError("\n".join(errors[:MAX_ERRORS]) + more + "\n(nothing was imported)")
    return table


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_BREAK = re.compile(r"<br\s*/?>", re.I)


def _markdown(path: Path, text: str, prefer: set[str]) -> Table:
    lines = text.splitlines()
    tables = [_table_at(lines, i) for i in range(len(lines) - 1)
              if "|" in lines[i] and _DELIMITER.match(lines[i + 1]) and "-" in lines[i + 1]]
    tables = [t for t in tables if t is not None]
    if not tables:
        raise UserError(f"{path}: no markdown table found; expected a GitHub pipe table "
                        "(a header row, a row of |---|, then one row per incident)")
    return next((t for t in tables if prefer & set(t.columns)), tables[0])


def _table_at(lines: list[str], start: int) -> Table | None:
    names = [c.strip() for c in _split(lines[start])]
    if len(names) != len(_split(lines[start + 1])):
        return None  # not a table: the delimiter row must have a cell per header cell
    columns = [name or f"column {i}" for i, name in enumerate(names, 1)]
    if len(set(columns)) != len(columns):
        return None
    table = Table(columns, {c: start + 1 for c in columns})
    for index in range(start + 2, len(lines)):
        if "|" not in lines[index] or not lines[index].strip():
            break
        table.rows.append(Row(index + 1, _cells(columns, _split(lines[index]))))
    return table


def _split(line: str) -> list[str]:
    """Cells of a table row: unescaped pipes separate; the outer pipes are optional."""
    cells, current, chars = [], [], iter(line.strip())
    for char in chars:
        if char == "\\":
            following = next(chars, "")
            current.append("|" if following == "|" else char + following)
        elif char == "|":
            cells.append("".join(current))
            current = []
        else:
            current.append(char)
    cells.append("".join(current))
    if line.strip().startswith("|"):
        cells = cells[1:]
    if line.strip().endswith("|") and not line.strip().endswith("\\|") and cells:
        cells = cells[:-1]
    return [_ESCAPED.sub(r"\1", _BREAK.sub("\n", c)).strip() for c in cells]
