"""A logbook file as rows of cells, each row knowing the line it starts on.

CSV: a header row, then one row per incident, in any dialect ``csv.Sniffer`` recognises
(comma, semicolon, tab or pipe; quoted cells may span lines); UTF-8, with or without a BOM.
JSONL: one JSON object per line (jsonl.py). Markdown: a GitHub pipe table (``\\|`` is a pipe inside a cell,
``<br>`` a line break), the first in the file whose header names a mapped column.

Everything read is bounded in bytes as well as in count (bounds.py), refused before the work
it would cost.
"""
from __future__ import annotations

import codecs
import csv
import io
import re
from pathlib import Path
from typing import Iterable

from tooling.errors import UsageError, UserError
from tooling.intake.bounds import MAX_BYTES, size, wide, within
from tooling.intake.jsonl import read_jsonl
from tooling.intake.table import Row, Table, cells
from tooling.records.findings import Finding
from tooling.records.reading import position, read_regular

SUFFIXES = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl",
            ".md": "markdown", ".markdown": "markdown"}


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
        return read_jsonl(path, text)
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
    # csv's own limit (128 Ki characters a cell) would refuse in words of its own: a cell may be
    # as long as the file (parsing it is quick), then the row's bytes meet the one bound of a row
    limit = csv.field_size_limit(MAX_BYTES + 1)
    try:
        while True:
            start = reader.line_num + 1
            found = next(reader, None)
            if found is None:
                break
            if not found:  # a blank line; a row of empty cells is reported by the import
                continue
            within(path, start, sum(size(c) for c in found))
            if table is None:
                table = _header(path, [c.strip() for c in found], start)
            else:
                table.rows.append(Row(start, cells(table.columns, found)))
    except csv.Error as exc:
        raise UserError(f"{path}:{reader.line_num}: {exc}; expected CSV with a header row") from None
    finally:
        csv.field_size_limit(limit)
    if table is None:  # else every mapped column would be reported missing from an empty header
        raise UserError(f"{path}:1:1: [empty-file] no header row (the file is empty or only blank lines); "
                        "expected CSV with a header row naming the columns")
    return table


def _header(path: Path, names: list[str], line: int) -> Table:
    wide(path, line, len(names))
    columns = [name or f"column {i}" for i, name in enumerate(names, 1)]
    seen: set[str] = set()
    for name in columns:
        if name in seen:
            raise UserError(f"{path}:{line}: column {name!r} appears twice in the header; "
                            "expected each column name once")
        seen.add(name)
    return Table(columns, {c: line for c in columns})


_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_BREAK = re.compile(r"<br\s*/?>", re.I)


def _markdown(path: Path, text: str, prefer: set[str]) -> Table:
    lines, tables, index = text.splitlines(), [], 0
    while index < len(lines) - 1:
        table = _table_at(path, lines, index) if _starts_table(lines, index) else None
        if table is None:
            index += 1
            continue
        tables.append(table)
        index += 2 + len(table.rows)  # a table's rows start no other: each line is read once
    if not tables:
        raise UserError(f"{path}: no markdown table found; expected a GitHub pipe table "
                        "(a header row, a row of |---|, then one row per incident)")
    return next((t for t in tables if prefer & set(t.columns)), tables[0])


def _starts_table(lines: list[str], index: int) -> bool:
    return "|" in lines[index] and "-" in lines[index + 1] and _DELIMITER.match(lines[index + 1]) is not None


def _table_at(path: Path, lines: list[str], start: int) -> Table | None:
    within(path, start + 1, size(lines[start]))
    names = [c.strip() for c in _split(lines[start])]
    if len(names) != len(_split(lines[start + 1])):
        return None  # not a table: the delimiter row must have a cell per header cell
    wide(path, start + 1, len(names))
    columns = [name or f"column {i}" for i, name in enumerate(names, 1)]
    if len(set(columns)) != len(columns):
        return None
    table = Table(columns, {c: start + 1 for c in columns})
    for index in range(start + 2, len(lines)):
        if "|" not in lines[index] or not lines[index].strip():
            break
        within(path, index + 1, size(lines[index]))
        table.rows.append(Row(index + 1, cells(columns, _split(lines[index]))))
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
