"""The generated pages on disk: every page of every edition rendered first, held in memory, then
the changed ones written together; pages of removed records deleted last.

A page that failed to render (a bug in a template, a value it cannot show) used to stop the
build after the pages before it were written: the English pages new, the Korean ones old. Now
nothing under docs/generated/ is touched until every page has rendered, and a write that fails
(a full disk) replaces no page either: each is written to a temporary file beside it first, and
only when all are written are they renamed into place (so the live-reload server never reads
half a page).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from tooling.fs.writers import writer_alive

TEMP_SUFFIX = ".tmp"


@dataclass
class RenderResult:
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)


@dataclass
class Rendered:
    """Pages rendered and not yet written: those whose text changed (a worker sends back only
    these), and a count of the rest."""

    changed: dict[Path, str] = field(default_factory=dict)
    unchanged: int = 0

    def add(self, path: Path, text: str) -> None:
        try:
            if path.read_text(encoding="utf-8") == text:
                self.unchanged += 1
                return
        except FileNotFoundError:
            pass
        self.changed[path] = text

    def merge(self, other: "Rendered") -> None:
        self.changed.update(other.changed)
        self.unchanged += other.unchanged


def write_all(rendered: Rendered) -> RenderResult:
    """Write every changed page, all or none. No fsync: a generated page can be rendered again."""
    temps: list[tuple[Path, Path]] = []
    made: list[Path] = []  # folders made here, removed again if a write fails
    try:
        for path, text in rendered.changed.items():
            made += _make_parents(path.parent)
            temp = path.with_name(f".{path.name}.{os.getpid()}{TEMP_SUFFIX}")  # one per process: renders may overlap
            temps.append((temp, path))
            _write(temp, text, shown=path)
    except BaseException:
        for temp, _ in temps:
            temp.unlink(missing_ok=True)
        for folder in reversed(made):
            folder.rmdir()
        raise
    for temp, path in temps:
        os.replace(temp, path)
    return RenderResult(written=[str(path) for _, path in temps], unchanged=rendered.unchanged)


def _write(temp: Path, text: str, *, shown: Path) -> None:
    try:
        temp.write_text(text, encoding="utf-8")
    except OSError as exc:  # a full disk: name the page, not its temporary file
        raise OSError(exc.errno, exc.strerror, str(shown)) from None


def _make_parents(folder: Path) -> list[Path]:
    """Make ``folder`` and its missing parents; the ones made, outermost first."""
    missing = [f for f in (folder, *folder.parents) if not f.exists()][::-1]
    for each in missing:
        each.mkdir(exist_ok=True)
    return missing


def remove_stale(out_dir: Path, expected: set[Path]) -> list[str]:
    """Delete every file under ``out_dir`` that this render did not write or keep."""
    removed = []
    for stale in sorted(p for p in out_dir.rglob("*") if p.is_file() and p not in expected):
        if _in_flight(stale):
            continue  # another render's page on its way in (`tooling serve` beside a build)
        stale.unlink(missing_ok=True)  # that other render may have removed it first
        removed.append(str(stale))
    return removed


def _in_flight(path: Path) -> bool:
    """A temporary page (``.P.md.<pid>.tmp``) whose writer may still rename it into place; one
    whose writer is gone (a SIGKILLed build) is a leftover, removed like any stale page."""
    name = path.name
    if not (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
        return False
    pid = name[: -len(TEMP_SUFFIX)].rsplit(".", 1)[-1]
    try:
        written_at = path.stat().st_mtime
    except FileNotFoundError:  # renamed into place meanwhile
        return True
    return not pid.isdigit() or writer_alive(int(pid), written_at)
