"""Validate record files: load and schema-check in parallel, then cross-record rules."""
from __future__ import annotations

import os
import pickle
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Iterable, Sequence

from tooling.rules.crossref import check_all
from tooling.records.findings import Finding, Severity, excerpt
from tooling.records.kinds import KINDS, is_kind
from tooling.records.layout import meant_name, record_dirs, record_files, repository_files
from tooling.records.load import load_file, no_collection
from tooling.records.locate import stat_key
from tooling.records.model import Record
from tooling.rules.mode_rules import check_failure_modes
from tooling.rules.schema_rules import check_record

PARALLEL_FROM = 200  # below this, starting workers costs more than it saves
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


def _outside(path: str, root: str | None) -> bool:
    """A symbolic link that leads out of the repository: never read, never echoed. (A link to
    nothing leads nowhere: reading says so.)"""
    if root is None or not os.path.islink(path) or not os.path.exists(path):
        return False
    real = os.path.realpath(path)
    return os.path.commonpath([real, root]) != root


def _check_file(path: str, root: str | None = None) -> Result:
    if _outside(path, root):
        return path, None, [Finding(path, 1, 1, "outside-repository",
                                    "symbolic link to a file outside the repository; expected the record itself")]
    with no_collection():
        loaded = load_file(path)
        if loaded.findings:
            return path, None, loaded.findings
        return path, loaded.data, record_findings(path, loaded.data)


def record_findings(path: str, data: Any) -> list[Finding]:
    """What one record says about itself: its schema, then the rules that need no other record
    (its failure mode against the catalogue). Run where the file was loaded, in parallel."""
    found = check_record(path, data)
    if usable(data) and not any(f.severity is Severity.ERROR for f in found):
        found += check_failure_modes([Record(path, data)])
    return found


def _check_chunk(paths: list[str], root: str | None = None) -> list[Result]:
    return [_check_file(p, root) for p in paths]


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
    validate gets its own copy of a result kept (pickled): nothing it does changes what is kept."""

    def __init__(self) -> None:
        self.kept: dict[tuple[Any, ...], bytes] = {}

    def check_files(self, files: Sequence[str], *, root: Path | None = None, jobs: int | None = None) -> list[Result]:
        within = os.path.realpath(root) if root is not None else None
        keys = [(stat_key(path), within) for path in files]
        todo = [path for path, key in zip(files, keys) if key[0] is None or key not in self.kept]
        fresh = {path: pickle.dumps(result) for path, result in zip(todo, check_files(todo, root=root, jobs=jobs))}
        self.kept = {key: fresh.get(path) or self.kept[key] for path, key in zip(files, keys) if key[0] is not None}
        return [pickle.loads(fresh.get(path) or self.kept[key]) for path, key in zip(files, keys)]


def usable(data: Any) -> bool:
    """Enough of a record to be referred to: a known kind and an id."""
    return isinstance(data, dict) and is_kind(data.get("kind")) and isinstance(data.get("id"), str)


def validate(paths: Sequence[Path], *, now: datetime, root: Path | None = None, jobs: int | None = None,
             checked: Checked | None = None) -> Report:
    """Check ``paths`` (files or folders); references also resolve against ``root``'s records.
    ``checked``: files checked before, not checked again unless they changed."""
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
    report.findings.extend(check_all(clean, universe, now=now, shown=shown))
    broken = {f.path for f in report.findings if f.severity is not Severity.NOTE}
    # a suggestion next to an error or a warning is noise: fix the record first
    report.findings = sorted(f for f in report.findings if f.severity is not Severity.NOTE or f.path not in broken)
    return report


def _misnamed(path: str) -> Finding:
    """misnamed-file (warning): a file that looks meant for a record is not read as one."""
    meant = meant_name(os.path.basename(path))
    return Finding(path, 1, 1, "misnamed-file", f"not read as a record: a record file's name is its id and .yaml "
                   f"(or .yml), in lower case; expected it named {excerpt(str(meant))}", Severity.WARNING)


def _covers(paths: Sequence[Path], root: Path) -> bool:
    """Whether ``paths`` include every record folder, so the repository need not be walked again."""
    given = {os.path.realpath(p) for p in paths}
    return all(os.path.realpath(d) in given for d in record_dirs(root))


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
