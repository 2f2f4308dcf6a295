"""A logbook read: its columns, and its rows of cells, each knowing the line it starts on."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

EXTRA = "(extra cells)"  # cells beyond the header: kept in notes, never silently dropped


@dataclass(frozen=True)
class Row:
    line: int
    cells: dict[str, Any]


@dataclass
class Table:
    columns: list[str]
    header_lines: dict[str, int]  # column -> the line that names it (a JSONL key: where first seen)
    rows: list[Row] = field(default_factory=list)


def cells(columns: list[str], values: list[str]) -> dict[str, Any]:
    """A row's cells by column; cells beyond the header under EXTRA."""
    found: dict[str, Any] = dict(zip(columns, values))
    if len(values) > len(columns):
        found[EXTRA] = [v for v in values[len(columns):] if v.strip()]
    return found
