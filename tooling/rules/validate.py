"""Validate record files: load and schema-check in parallel, then cross-record rules."""
from __future__ import annotations

import os
import pickle
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from tooling.records.findings import Finding, Severity, excerpt
from tooling.records.layout import meant_name, record_files, record_sources, repository_files
from tooling.records.locate import stat_key
from tooling.records.model import Record
from tooling.rules.crossref import OWN_RULES, check_all
from tooling.rules.others import RecordIndex, usable
from tooling.rules.record_check import file_findings

PARALLEL_FROM = 200  # below this, starting workers costs more than it saves
OWN = "own findings"  # what Checked keeps of a file: the findings of the rules of its record alone
Result = tuple[str, Any, list[Finding]]


@dataclass
class Report:
    files: int = 0
    records: list[Record] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def problems(self, *, strict: bool) -> list[Finding]:
        if strict:
            return [f.as_error() if f.severity is Severity.WARNING else f for f in self.findings]
        return self.findings

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]


def _check_chunk(paths: list[str], root: str | None = None) -> list[Result]:
    return [(path, *file_findings(path, root)) for path in paths]


def check_files(files: Sequence[str], *, root: Path | None = None, jobs: int | None = None) -> list[Result]:
    workers = jobs or os.cpu_count() or 1
    within = os.path.realpath(root) if root is not None else None
    if workers < 2 or len(files) < PARALLEL_FROM:
        return _check_chunk(list(files), within)
    size = max(16, len(files) // (workers * 8))
    chunks = [list(files[i:i + size]) for i in range(0, len(files), size)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return [result for chunk in pool.map(partial(_check_chunk, root=within), chunks) for result in chunk]


class Checked:
    """The files an earlier validate of this process checked, by path and stat (taken before the
    file was read), so that `tooling serve` checks again only the records that changed. Each
    validate gets its own copy of a result kept (pickled): nothing it does changes what is kept.
    Beside each result, what analyses derived from that file alone (:meth:`kept_of`), kept and
    dropped with it."""

    def __init__(self) -> None:
        self.kept: dict[tuple[Any, ...], Any] = {}  # key -> the result as stored (:meth:`stored`)
        self.derived: dict[tuple[Any, ...], dict[str, Any]] = {}  # key -> name -> value
        self.keys: dict[str, tuple[Any, ...]] = {}  # path as given -> key, of the files checked last
        # path as given -> its derived values (the dict in ``derived``), of the files checked last:
        # each file's key looked up once, not at each of its four values read (kept_of was 4% of a
        # warm tooling repeats over 100,000 incidents)
        self.found: dict[str, dict[str, Any]] = {}
        self.changed = False  # something derived was added or dropped since loaded
        self.holding = False  # within saved_once: check_files does not save

    def check_files(self, files: Sequence[str], *, root: Path | None = None, jobs: int | None = None) -> list[Result]:
        within = os.path.realpath(root) if root is not None else None
        keys = [self.key(path, within) for path in files]
        todo = [path for path, key in zip(files, keys) if key[0] is None or key not in self.kept]
        fresh = {path: self.stored(result) for path, result in zip(todo, check_files(todo, root=root, jobs=jobs))}
        self.keys = {path: key for path, key in zip(files, keys) if key[0] is not None}
        # every file kept, and as many files as kept: what is kept is these files' already, and
        # rebuilding it would change nothing (0.1 s of a warm command over 100,000 files)
        if todo or len(set(keys)) != len(self.kept):
            self.kept = {key: fresh.get(path) or self.kept[key] for path, key in self.keys.items()}
            derived = {key: found for key, found in self.derived.items() if key in self.kept}
            self.changed, self.derived = self.changed or len(derived) != len(self.derived), derived
        self.found = {path: found for path, key in self.keys.items() if (found := self.derived.get(key)) is not None}
        return [self.given(fresh.get(path) or self.kept[key]) for path, key in zip(files, keys)]

    def stored(self, result: Result) -> Any:
        """What is kept of ``result``: pickled, so that each validate of this process (`tooling
        serve` validates again at every edit) is given a copy of its own (:meth:`given`)."""
        return pickle.dumps(result)

    def given(self, stored: Any) -> Result:
        return pickle.loads(stored)  # type: ignore[no-any-return]

    def key(self, path: str, within: str | None) -> tuple[Any, ...]:
        """What a result is kept under: the file's absolute path and stat, and the repository."""
        return stat_key(path), within

    def kept_of(self, path: str, name: str) -> Any:
        """What was kept as ``name`` of the file ``path`` as last checked; None if nothing. The
        value must depend on nothing but the file's content and the code (see rules.kept)."""
        found = self.found.get(path)
        return None if found is None else found.get(name)

    def keep_of(self, path: str, name: str, value: Any) -> None:
        """Keep ``value`` as ``name`` of the file ``path``, as long as its check is kept."""
        key = self.keys.get(path)
        if key is not None:
            found = self.found[path] = self.derived.setdefault(key, {})
            found[name] = value
            self.changed = True

    def kept_or_made(self, path: str, name: str, valid: Callable[[Any], bool], make: Callable[[], Any]) -> Any:
        """What was kept as ``name`` of the file ``path`` where ``valid`` takes it for this code's
        (a kept file may hold another version's), else ``make()``'s value, kept from now on."""
        value = self.kept_of(path, name)
        if not valid(value):
            value = make()
            self.keep_of(path, name, value)
        return value

    def save(self) -> None:
        """Kept in memory only: nothing to write (see rules.kept.KeptChecks)."""

    @contextmanager
    def saved_once(self) -> Iterator[None]:
        """Within, what is checked and derived is kept in memory; on leaving (an error too) it is
        saved once: a command that validates, then derives from every file, writes its kept file
        once, not once per step (over 100,000 incidents each write is a second and a half)."""
        self.holding = True
        try:
            yield
        finally:
            self.holding = False
            self.save()


def validate(paths: Sequence[Path], *, now: datetime, root: Path | None = None, jobs: int | None = None,
             checked: Checked | None = None, warnings: bool = True) -> Report:
    """Check ``paths`` (files or folders); references also resolve against ``root``'s records.
    ``checked``: files checked before, not checked again unless they changed. ``warnings`` False:
    the cross-record rules that only warn are not run (:func:`~tooling.rules.crossref.check_all`),
    for a caller that reads only the errors."""
    misnamed: list[str] = []
    files = record_files(paths, misnamed=misnamed)
    report = Report(files=len(files))
    results = (checked.check_files if checked is not None else check_files)(files, root=root, jobs=jobs)
    report.records, report.findings, clean = _records(results)
    report.findings.extend(_misnamed(path) for path in misnamed)
    universe = list(report.records)
    if root is not None and not _covers(paths, root):
        universe += repository_records(root, skip=files, jobs=jobs)
    # a record that does not load is still named by others: its own error is the one to fix
    shown = [path for path, data, _ in results if not usable(data)]
    report.findings.extend(check_all(clean, RecordIndex(universe, shown), now=now, warnings=warnings,
                                     own=checked is None))
    if checked is not None:
        report.findings.extend(_own_findings(clean, checked))
    broken = {f.path for f in report.findings if f.severity is not Severity.NOTE}
    # a suggestion next to an error or a warning is noise: fix the record first
    report.findings = sorted(f for f in report.findings if f.severity is not Severity.NOTE or f.path not in broken)
    return report


def _own_findings(records: list[Record], checked: Checked) -> list[Finding]:
    """The findings of :data:`~tooling.rules.crossref.OWN_RULES` for ``records``, kept with each
    file's check: over 100,000 unchanged incidents their times were read again at every command."""
    found: list[Finding] = []
    for record in records:
        found.extend(checked.kept_or_made(record.path, OWN, _findings,
                                          lambda: tuple(f for rule in OWN_RULES for f in rule([record]))))
    return found


def _findings(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(f, Finding) for f in value)


def _misnamed(path: str) -> Finding:
    """misnamed-file (warning): a file that looks meant for a record is not read as one."""
    meant = meant_name(os.path.basename(path))
    return Finding(path, 1, 1, "misnamed-file", f"not read as a record: a record file's name is its id and .yaml "
                   f"(or .yml), in lower case; expected it named {excerpt(str(meant))}", Severity.WARNING)


def _covers(paths: Sequence[Path], root: Path) -> bool:
    """Whether ``paths`` include every record folder and shipped record the repository reads, so
    it need not be walked again."""
    given = {os.path.realpath(p) for p in paths}
    return all(os.path.realpath(d) in given for d in record_sources(root))


def _records(results: Iterable[Result]) -> tuple[list[Record], list[Finding], list[Record]]:
    """(usable records, every finding, records without errors) from checked files."""
    records, findings, clean = [], [], []
    for path, data, found in results:
        findings.extend(found)
        if usable(data):
            record = Record(path, data)
            records.append(record)
            if not any(f.severity is Severity.ERROR for f in found):
                clean.append(record)
    return records, findings, clean


def repository_records(root: Path, *, skip: Iterable[str] = (), jobs: int | None = None) -> list[Record]:
    """Every loadable record of the repository (outside ``skip``), to resolve references against."""
    skipped = {os.path.abspath(p) for p in skip}
    files = [p for p in repository_files(root) if os.path.abspath(p) not in skipped]
    return [Record(p, d) for p, d, _ in check_files(files, root=root, jobs=jobs) if usable(d)]
