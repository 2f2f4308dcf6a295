"""Validate record files: load and schema-check in parallel, then cross-record rules."""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from tooling.errors import UsageError
from tooling.records.crossref import check_all
from tooling.records.findings import Finding, Severity
from tooling.records.kinds import KINDS, RECORD_DIRS
from tooling.records.load import load_file
from tooling.records.model import Record
from tooling.records.schema import check_record

PARALLEL_FROM = 200  # below this, starting workers costs more than it saves
_SUFFIXES = (".yaml", ".yml")


@dataclass
class Report:
    files: int = 0
    records: list[Record] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def problems(self, *, strict: bool) -> list[Finding]:
        if strict:
            return [f.as_error() if f.severity is Severity.WARNING else f for f in self.findings]
        return self.findings


def _walk(folder: Path) -> list[str]:
    found = []
    for parent, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(os.path.join(parent, n) for n in sorted(names)
                     if n.endswith(_SUFFIXES) and not n.startswith("."))
    return found


def collect_files(paths: Iterable[Path]) -> list[str]:
    files: list[str] = []
    for path in paths:
        if path.is_dir():
            files.extend(_walk(path))
        elif path.is_file():
            files.append(str(path))
        else:
            raise UsageError(f"{path}: no such file or directory")
    return list(dict.fromkeys(files))


def repository_files(root: Path) -> list[str]:
    return collect_files(root / d for d in RECORD_DIRS if (root / d).is_dir())


def _check_file(path: str) -> tuple[str, Any, list[Finding]]:
    loaded = load_file(path)
    if loaded.findings:
        return path, None, loaded.findings
    return path, loaded.data, check_record(path, loaded.data)


def _check_chunk(paths: list[str]) -> list[tuple[str, Any, list[Finding]]]:
    return [_check_file(p) for p in paths]


def check_files(files: Sequence[str], *, jobs: int | None = None) -> list[tuple[str, Any, list[Finding]]]:
    workers = jobs or os.cpu_count() or 1
    if workers < 2 or len(files) < PARALLEL_FROM:
        return _check_chunk(list(files))
    size = max(16, len(files) // (workers * 8))
    chunks = [list(files[i:i + size]) for i in range(0, len(files), size)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return [result for chunk in pool.map(_check_chunk, chunks) for result in chunk]


def _usable(data: Any) -> bool:
    return isinstance(data, dict) and data.get("kind") in KINDS and isinstance(data.get("id"), str)


def validate(paths: Sequence[Path], *, root: Path | None = None, jobs: int | None = None) -> Report:
    """Check ``paths`` (files or folders); references also resolve against ``root``'s records."""
    files = collect_files(paths)
    results = check_files(files, jobs=jobs)
    report = Report(files=len(files))
    clean: list[Record] = []
    for path, data, findings in results:
        report.findings.extend(findings)
        if _usable(data):
            record = Record(path, data)
            report.records.append(record)
            if not any(f.severity is Severity.ERROR for f in findings):
                clean.append(record)
    universe = list(report.records)
    if root is not None:
        universe += repository_records(root, skip=files, jobs=jobs)
    report.findings.extend(check_all(clean, universe))
    report.findings.sort()
    return report


def repository_records(root: Path, *, skip: Iterable[str] = (), jobs: int | None = None) -> list[Record]:
    """Every loadable record of the repository (outside ``skip``), to resolve references against."""
    skipped = {os.path.abspath(p) for p in skip}
    files = [p for p in repository_files(root) if os.path.abspath(p) not in skipped]
    return [Record(p, d) for p, d, _ in check_files(files, jobs=jobs) if _usable(d)]
