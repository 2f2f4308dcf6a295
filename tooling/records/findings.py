"""A finding is one located problem in one record file."""
from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path


EXCERPT = 60  # characters of a value quoted in a message; a 1 MB value is never echoed whole


def excerpt(text: str, limit: int = EXCERPT) -> str:
    """``text`` quoted for a message, cut to ``limit`` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


def printable(path: str) -> str:
    """``path`` on one line: a line break or other control character in a file name is shown
    escaped (``foo\\n.yaml``, as ``ls -b`` does), so that each finding stays one line."""
    if path.isprintable():
        return path
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in path)


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"  # a suggestion: never fails a check, not even with --strict


@dataclass(frozen=True, order=True)
class Finding:
    """``path:line:col: [rule] message``; line and col are 1-based."""

    path: str
    line: int
    col: int
    rule: str
    message: str
    severity: Severity = Severity.ERROR

    def format(self, *, relative_to: Path | None = None) -> str:
        shown = printable(self.path if relative_to is None else shown_path(self.path, relative_to))
        prefix = "" if self.severity is Severity.ERROR else f"{self.severity.value}: "
        return f"{shown}:{self.line}:{self.col}: [{self.rule}] {prefix}{self.message}"

    def as_error(self) -> "Finding":
        return Finding(self.path, self.line, self.col, self.rule, self.message, Severity.ERROR)


def shown_path(path: str | os.PathLike[str], relative_to: Path | None = None) -> str:
    """``path`` as every message names it: relative to ``relative_to`` (the repository, or by
    default the working folder) when inside it, else as given."""
    # the folder resolved (the repository may be reached through a link), the file not: a
    # record that is a link is named where it is, not where it leads (nowhere, or outside)
    folder = Path.cwd() if relative_to is None else relative_to
    absolute = Path(os.path.abspath(path))
    try:
        return str((absolute.parent.resolve() / absolute.name).relative_to(folder.resolve()))
    except ValueError:  # outside it: as it was given
        return os.fspath(path)
    except (RuntimeError, OSError):  # a loop of folder links: name it as it was given
        return os.path.relpath(absolute, os.path.abspath(folder))
