"""A whole import: the file and its mapping read, every row drafted, then the new rows written.

Planning touches nothing: a mapping that does not validate, a JSONL line that is not an object
or a row that cannot be filed anywhere stops the import before the first record is written.
Writing goes through ``new_incident`` (a commented, schema-checked file under the next free id,
created atomically). A row whose content an incident's marker names already (row_identity.py) is
reported as skipped, so a rerun adds only new rows, whatever the file is called now.
Imports take turns (:func:`one_at_a_time`): two at once would both plan before either wrote, and
file the same rows twice.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from tooling.errors import UsageError, UserError
from tooling.fs.lock import LockTimeout, locked
from tooling.intake.fields import NAMED
from tooling.intake.formats import format_of, read_table
from tooling.intake.mapping import Mapping, bind, load_mapping, value_problem
from tooling.intake.notes import Note
from tooling.intake.row_identity import Imported, imported
from tooling.intake.rows import RowDraft, Reading, draft
from tooling.intake.table import EXTRA, Row
from tooling.intake.values import Context, empty
from tooling.records.kinds import KINDS
from tooling.records.layout import ids
from tooling.writers.scaffold import new_incident

BOOKKEEPING = ("kind", "path")  # what an export writes beside the fields: not reported as ignored
MAX_PROBLEMS = 20
WAIT_SECONDS = 600.0  # for another import to finish: a logbook of 100,000 rows takes minutes


@dataclass
class Plan:
    shown: str  # the file as the report names it
    name: str  # the file's name, as markers record it
    by_id: bool  # the logbook has an id column
    header: list[Note] = field(default_factory=list)  # about the file: columns that feed nothing
    drafts: list[RowDraft] = field(default_factory=list)
    skipped: list[Note] = field(default_factory=list)  # empty rows
    before: Imported = field(default_factory=Imported)  # the incidents imported before


@contextmanager
def one_at_a_time(root: Path) -> Iterator[None]:
    """Hold the repository folder's lock from planning to the last record written: flock on the
    folder itself, so that an import that fails leaves no file or folder behind, and a killed one
    no stale lock (the kernel releases it)."""
    try:
        with locked(root, timeout=WAIT_SECONDS):
            yield
    except LockTimeout:
        raise UserError(f"another import into this repository is still running after {WAIT_SECONDS:g} s; "
                        "expected one import at a time (run it again when that one has finished)") from None


def plan_import(path: Path, *, root: Path, now: datetime, mapping_path: Path | None, fmt: str | None,
                place: dict[str, str] | None = None) -> Plan:
    """``place``: where rows that name neither a run nor a cluster go ({"run": id} or
    {"cluster": name}), in place of the mapping's defaults for them."""
    runs = tuple(ids(root, "run"))
    given = load_mapping(mapping_path, runs=runs) if mapping_path is not None else Mapping()
    for name, value in (place or {}).items():
        problem = value_problem(name, value, runs)
        if problem:
            raise UsageError(f"--{name} {value!r}: {problem}")
        given.defaults = {**{k: v for k, v in given.defaults.items() if k not in ("run", "cluster")}, name: value}
    table = read_table(path, format_of(path, fmt), prefer=[c for cs in given.columns.values() for c in cs])
    mapping = bind(given, table.columns, str(path))
    plan = Plan(str(path), path.name, "id" in mapping.columns, before=imported(root))
    used = {c for cs in mapping.columns.values() for c in cs}
    plan.header = [Note(table.header_lines[c], "ignored", f"column {c!r}", "", "feeds no field; name it under "
                        "columns: in a mapping to import it") for c in table.columns
                   if c not in used and c not in BOOKKEEPING]
    plan.header += [Note(table.header_lines[c], "guess", f"column {c!r}", name, "a usual name for it; name the "
                         "column under columns: in a mapping to say otherwise") for c, name in mapping.usual.items()]
    reading = Reading(plan.name, mapping, Context(mapping.values, mapping.separators, mapping.dates, runs),
                      now.year, by_id=plan.by_id)
    # references name the logbook's ids of rows before (drafting adds them), else incidents
    reading.known = set() if plan.by_id else set(ids(root, "incident"))
    _draft_rows(plan, table.rows, reading)
    return plan


def _draft_rows(plan: Plan, rows: list[Row], reading: Reading) -> None:
    """Every row drafted; a row that cannot be filed anywhere stops the import (all of them listed)."""
    problems = []
    for row in rows:
        if all(empty(v) for c, v in row.cells.items() if c != EXTRA):
            plan.skipped.append(Note(row.line, "skipped", "row", "", "no cell has a value"))
            continue
        try:
            made = draft(row, reading)
        except UserError as exc:  # a value past a bound (bounds.py): refused at once, at its row
            raise UserError(f"{plan.shown}:{row.line}: {exc} (nothing was imported)") from None
        if isinstance(made, str):
            problems.append(f"{plan.shown}:{row.line}: {made}")
        else:
            plan.drafts.append(made)
    if problems:
        more = f"\n... and {len(problems) - MAX_PROBLEMS} more" if len(problems) > MAX_PROBLEMS else ""
        raise UserError("\n".join(problems[:MAX_PROBLEMS]) + more + "\n(nothing was imported)")


@dataclass
class Counts:
    created: list[str] = field(default_factory=list)
    already: int = 0
    guesses: int = 0
    unmapped: int = 0


def carry_out(plan: Plan, *, root: Path, now: datetime, dry_run: bool, say: Callable[[str], None]) -> Counts:
    """Report every row and, unless ``dry_run``, write each new one; returns what was done.

    All or none, as ``file_all`` files a log's incidents: when a write fails (a full disk, a
    row the loader refuses), the incidents created before it are removed again, so that the
    error's "nothing was changed" holds and a rerun does not skip rows as imported before."""
    counts = Counts()
    try:
        _carry_out(plan, counts, root=root, now=now, dry_run=dry_run, say=say)
    except BaseException as exc:
        for stem in counts.created:
            (root / KINDS["incident"].directory / f"{stem}.yaml").unlink(missing_ok=True)
        if isinstance(exc, UserError):
            undone = f": {', '.join(counts.created)}, created before it, removed again" if counts.created else ""
            raise UserError(f"{exc} (nothing was imported{undone})") from None
        raise
    return counts


def _carry_out(plan: Plan, counts: Counts, *, root: Path, now: datetime, dry_run: bool,
               say: Callable[[str], None]) -> None:
    new_ids: dict[str, str] = {}  # the logbook's id -> the incident its row is
    for note in plan.header:
        say(note.format(plan.shown))
    for item in sorted([*plan.drafts, *plan.skipped], key=lambda d: d.line):
        if isinstance(item, Note):
            say(item.format(plan.shown))
            continue
        earlier = plan.before.find(item.identity, plan.name, item.key)
        if earlier is not None:  # its guesses were reported when it was imported
            counts.already += 1
            if item.source_id is not None:  # a later row may name it
                new_ids[item.source_id] = earlier
            say(Note(item.line, "skipped", item.key, "", f"imported before as {earlier}").format(plan.shown))
            continue
        for note in item.notes:
            say(note.format(plan.shown))
        counts.guesses += sum(n.tag == "guess" for n in item.notes)
        counts.unmapped += sum(n.tag == "unmapped" for n in item.notes)
        if not dry_run:
            try:
                path = write(item, root=root, now=now, new_ids=new_ids if plan.by_id else None)
            except UserError as exc:  # located at its row; FieldError names fields, as a mapping does
                raise UserError(f"{plan.shown}:{item.line}: {exc}") from None
            counts.created.append(path.stem)
            if item.source_id is not None:
                new_ids[item.source_id] = path.stem
            say(Note(item.line, "created", path.stem, "", str(path.relative_to(root))).format(plan.shown))


def write(item: RowDraft, *, root: Path, now: datetime, new_ids: dict[str, str] | None) -> Path:
    values = dict(item.fields)
    for name, named in item.references.items():  # rows are written in order: earlier ones have ids
        new = [new_ids[n] if new_ids is not None else n for n in (named if isinstance(named, list) else [named])]
        values[name] = new if isinstance(named, list) else new[0]
    own: dict[str, Any] = {name: values.pop(name) for name in NAMED if name in values}
    own.setdefault("run", None)
    return new_incident(root=root, now=now, **own, extra=values)
