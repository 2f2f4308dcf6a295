"""A logbook row's identity is its content: what lets a rerun know a row whatever the file is called.

The notes of an imported incident end with its marker, ``imported from FILE row N, content D``
(``id "X"`` for ``row N`` when the logbook has an id column): FILE and the row say where it came
from, for a person; D, a digest of the row's non-empty cells by column name, is what a rerun
matches. So the same logbook saved under another name, with its rows or columns in another
order, imports nothing new, and two logbooks that happen to share a name do not hide each
other's rows. The n-th of several identical rows is ``D #n``: a logbook that lists the same
incident twice keeps both. Markers written before the digest (``imported from FILE row N``)
still match by file name and row, so that a repository imported then is not imported twice.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooling.intake.values import empty
from tooling.records.kinds import KINDS
from tooling.records.layout import record_files
from tooling.records.load import load_file

DIGEST_HEX = 16  # 64 bits: no two rows of any set of logbooks a team keeps collide
MARKER = re.compile(r"^imported from (?P<name>.+) (?P<key>row \d+|id \".*?\")"
                    rf"(?:, content (?P<content>[0-9a-f]{{{DIGEST_HEX}}}(?: #\d+)?))?$", re.M)


def digest(cells: dict[str, Any]) -> str:
    """The row's content, whatever its order: its non-empty cells by column name (text with its
    line endings and outer spaces as a spreadsheet may rewrite them, made one form)."""
    content = {column: _same(value) for column, value in cells.items() if not empty(value)}
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_HEX]


def _same(value: Any) -> Any:
    return value.replace("\r\n", "\n").replace("\r", "\n").strip() if isinstance(value, str) else value


@dataclass
class Identities:
    """The identities of one file's rows, in order: the second of two identical rows is ``D #2``."""

    seen: Counter[str] = field(default_factory=Counter)

    def of(self, cells: dict[str, Any]) -> str:
        found = digest(cells)
        self.seen[found] += 1
        return found if self.seen[found] == 1 else f"{found} #{self.seen[found]}"


def marker(name: str, key: str, identity: str) -> str:
    return f"imported from {name} {key}, content {identity}"


@dataclass
class Imported:
    """The incidents imported before, by the identity of their row (and, for markers written
    before rows had one, by file name and row)."""

    by_content: dict[str, str] = field(default_factory=dict)
    by_place: dict[tuple[str, str], str] = field(default_factory=dict)

    def find(self, identity: str, name: str, key: str) -> str | None:
        return self.by_content.get(identity) or self.by_place.get((name, key))


def imported(root: Path) -> Imported:
    """Every marker in the notes of the repository's incidents."""
    folder = root / KINDS["incident"].directory
    found = Imported()
    for path in record_files([folder]) if folder.is_dir() else []:
        data = load_file(path).data
        if isinstance(data, dict) and data.get("kind") == "incident" and isinstance(data.get("notes"), str):
            for m in MARKER.finditer(data["notes"]):
                if m["content"]:
                    found.by_content.setdefault(m["content"], str(data.get("id")))
                else:
                    found.by_place.setdefault((m["name"], m["key"]), str(data.get("id")))
    return found
