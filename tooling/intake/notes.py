"""The import report: one line per value guessed, left unmapped or skipped, located by row."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tooling.records.findings import excerpt

# What a line of the report is about:
#   guess     a value the row did not give, filled in (or a value read loosely, such as a date)
#   unmapped  a value the row gave that fits no field value; the record holds a fallback
#   skipped   a row imported before (its rerun key is already in the repository)
#   ignored   a column that feeds no field
#   created   the record a row became
TAGS = ("guess", "unmapped", "skipped", "ignored", "created")


@dataclass(frozen=True)
class Note:
    line: int  # the line of the source file the row starts on (a CSV's spreadsheet row)
    tag: str
    field: str
    value: str
    why: str

    def format(self, source: str) -> str:
        said = f"{self.field}: {self.value}" if self.value else self.field
        return f"{source}:{self.line}: [{self.tag}] {said} ({self.why})"


def shown(value: Any) -> str:
    """A value on one line of the report: plain when it is plain text, quoted when it is not."""
    if isinstance(value, list):
        return "[" + ", ".join(shown(v) for v in value) + "]"
    text = str(value)
    if text and text.isprintable() and text == text.strip() and len(text) <= 80:
        return text
    return excerpt(text)


def raw(value: Any) -> str:
    """A source value as it was written, quoted, for [unmapped] lines and notes."""
    return excerpt(value if isinstance(value, str) else str(value))
