"""Before launch: the dataset's files exist, are readable, are as recorded, and one batch loads.

A job that dies at step 0 on a missing shard, or at hour 6 on a truncated one, has spent its
GPU-hours on nothing; the check costs a ``stat`` per file (and a read of each, with checksums)
and one batch, at the top of the sbatch script (``tooling data-check``). Every failure is one
line naming its file, all of them at once, so one fix round is enough.

The dataset manifest is JSON, one file per line (``write_manifest`` writes it; a hand-written
one is read the same way)::

    {"version": 1, "files": [
    {"path": "train/shard-00000.bin", "bytes": 1048576, "sha256": "9f86d081884c7d65..."},
    {"path": "train/shard-00001.bin", "bytes": 1048576}
    ]}

``path``: relative to the manifest's folder (or absolute); ``bytes``: the file's size;
``sha256`` (optional): its content's hash, 64 hex digits. Nothing else: an unknown key (a typo
of ``sha256``) is an error rather than a check silently skipped. The loader is any callable
that takes the list of the manifest's paths, in order, and returns an iterable of batches (a
DataLoader); the check takes its first batch. Only the standard library (and tooling.fs) is
imported: the loader brings its own torch.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooling.fs.atomic import replace_file

VERSION = 1
KEYS = {"path", "bytes", "sha256"}
_SHA256 = re.compile(r"^[0-9a-f]{64}\Z")
_BLOCK = 1 << 20
Loader = Callable[[list[Path]], Iterable[Any]]


@dataclass(frozen=True)
class FileEntry:
    path: str  # as the manifest says it
    bytes: int
    sha256: str | None


@dataclass(frozen=True)
class Problem:
    """One failure, located: ``path:line:col: [rule] message``."""
    path: str
    rule: str  # data-manifest, data-missing, data-unreadable, data-size, data-checksum, data-loader
    message: str
    line: int = 1
    col: int = 1

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: [{self.rule}] {self.message}"


class ManifestError(ValueError):
    """A dataset manifest that cannot be read; ``problem`` says where and why."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(str(problem))
        self.problem = problem


@dataclass(frozen=True)
class DataReport:
    manifest: Path
    files: int
    bytes: int  # as recorded
    hashed: int  # files whose sha256 was compared
    problems: tuple[Problem, ...]
    batch: str | None  # the first batch, in words; None: no loader, or not run (files failed)

    @property
    def ok(self) -> bool:
        return not self.problems


def read_manifest(manifest: Path) -> list[FileEntry]:
    """The entries of a dataset manifest; raises ManifestError, located, when it cannot be read."""
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ManifestError(Problem(str(manifest), "data-manifest", f"not JSON: {exc.msg}; expected a dataset "
                                    "manifest (tooling.resilience.data_check)", exc.lineno, exc.colno)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(Problem(str(manifest), "data-manifest", f"cannot be read: {_reason(exc)}; expected "
                                    "a dataset manifest")) from None
    if not isinstance(data, dict) or set(data) != {"version", "files"} or data["version"] != VERSION \
            or not isinstance(data["files"], list):
        raise ManifestError(Problem(str(manifest), "data-manifest", 'not a dataset manifest; expected {"version": '
                                    f'{VERSION}, "files": [...]}}'))
    entries, seen = [], set()
    for index, raw in enumerate(data["files"]):
        entry = _entry(raw)
        if entry is None or entry.path in seen:
            why = "named twice" if entry is not None else f"expected {{\"path\": ..., \"bytes\": N}} and an optional " \
                                                          "\"sha256\" of 64 hex digits"
            raise ManifestError(Problem(str(manifest), "data-manifest", f"files[{index}] {json.dumps(raw)[:200]}: "
                                        f"{why}"))
        seen.add(entry.path)
        entries.append(entry)
    return entries


def _entry(raw: Any) -> FileEntry | None:
    if not isinstance(raw, dict) or not {"path", "bytes"} <= set(raw) <= KEYS:
        return None
    path, size, digest = raw["path"], raw["bytes"], raw.get("sha256")
    if not isinstance(path, str) or not path or "\0" in path or not isinstance(size, int) or isinstance(size, bool) \
            or size < 0 or not (digest is None or (isinstance(digest, str) and _SHA256.match(digest.lower()))):
        return None
    return FileEntry(path, size, digest.lower() if digest else None)


def write_manifest(manifest: Path, files: Iterable[Path], *, checksums: bool = True) -> list[FileEntry]:
    """Record ``files`` (a folder: every file under it, sorted; the manifest itself left out) with
    their sizes and, with ``checksums``, sha256; written atomically. Paths inside the manifest's
    folder are written relative to it. Raises FileNotFoundError for a path that is not there."""
    folder = manifest.parent.resolve()
    paths: list[Path] = []
    for given in files:
        if given.is_dir():
            paths += sorted(p for p in given.rglob("*") if p.is_file() and p.resolve() != manifest.resolve())
        elif given.is_file():
            paths.append(given)
        else:
            raise FileNotFoundError(2, "no such file", str(given))
    entries = []
    for path in paths:
        real = path.resolve()
        shown = str(real.relative_to(folder)) if real.is_relative_to(folder) else str(real)
        entries.append(FileEntry(shown, real.stat().st_size, _sha256(real) if checksums else None))
    lines = [json.dumps({k: v for k, v in vars(e).items() if v is not None}) for e in entries]
    replace_file(manifest, f'{{"version": {VERSION}, "files": [\n' + ",\n".join(lines) + "\n]}\n")
    return entries


def check(manifest: Path, *, loader: Loader | None = None, loader_name: str = "the loader",
          checksums: bool = True, workers: int = 8) -> DataReport:
    """Every file of ``manifest`` there, readable, of its size (and sha256, with ``checksums``);
    then, if they all are, ``loader``'s first batch. Raises ManifestError for a bad manifest."""
    entries = read_manifest(manifest)
    paths = [manifest.parent / e.path for e in entries]
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(entries)))) as pool:  # a network file system's latency
        found = list(pool.map(lambda pair: _check_file(*pair, manifest, checksums), enumerate(zip(entries, paths))))
    problems = [problem for problem in found if problem is not None]
    batch = None
    if loader is not None and not problems:
        batch, failed = first_batch(loader, paths, manifest, loader_name)
        problems += [failed] if failed else []
    hashed = sum(1 for e in entries if e.sha256) if checksums else 0
    return DataReport(manifest, len(entries), sum(e.bytes for e in entries), hashed, tuple(problems), batch)


def _check_file(index: int, pair: tuple[FileEntry, Path], manifest: Path, checksums: bool) -> Problem | None:
    entry, path = pair
    where = f"files[{index}] of {manifest}"
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):  # a folder; a FIFO, whose open would block
            raise IsADirectoryError(21, "not a regular file") if stat.S_ISDIR(info.st_mode) else \
                OSError(0, "not a regular file")
        size = info.st_size
        digest = _sha256(path) if checksums and entry.sha256 else _first_block(path)
    except FileNotFoundError:
        return Problem(str(path), "data-missing", f"no such file ({where}); expected the dataset's file there")
    except OSError as exc:
        return Problem(str(path), "data-unreadable", f"cannot be read: {_reason(exc)} ({where}); expected a "
                                                     "readable file")
    if size != entry.bytes:
        return Problem(str(path), "data-size", f"{size:,} bytes, the manifest records {entry.bytes:,} ({where}); "
                                               "expected the file as recorded (a partial copy? if the dataset "
                                               "changed on purpose, write its manifest again)")
    if checksums and entry.sha256 and digest != entry.sha256:
        return Problem(str(path), "data-checksum", f"sha256 {digest}, the manifest records {entry.sha256} ({where}); "
                                                   "expected the recorded content (a corrupt copy?)")
    return None


def first_batch(loader: Loader, paths: list[Path], manifest: Path,
                name: str) -> tuple[str | None, Problem | None]:
    """``loader``'s first batch in words, or the problem it raised (located at the file it names, if any)."""
    try:
        batch = next(iter(loader(paths)), _NONE)
    except Exception as exc:  # whatever the user's loader raises is a finding, not a crash
        where = getattr(exc, "filename", None) or str(manifest)
        return None, Problem(str(where), "data-loader", f"{name} failed on its first batch: {type(exc).__name__}: "
                                                        f"{exc}; expected one batch from the manifest's files")
    if batch is _NONE:
        return None, Problem(str(manifest), "data-loader", f"{name} gave no batch from {len(paths)} files; expected "
                                                           "at least one")
    return describe(batch), None


_NONE = object()


def describe(batch: Any, depth: int = 0) -> str:
    """A batch in a few words: ``Tensor[32, 128] int64``, ``tuple of 2: ...``, ``{input: ..., label: ...}``."""
    if hasattr(batch, "shape") and hasattr(batch, "dtype"):
        return f"{type(batch).__name__}[{', '.join(map(str, batch.shape))}] {str(batch.dtype).removeprefix('torch.')}"
    if depth < 2 and isinstance(batch, dict):
        return "{" + ", ".join(f"{k}: {describe(v, depth + 1)}" for k, v in list(batch.items())[:8]) + "}"
    if depth < 2 and isinstance(batch, (list, tuple)):
        return f"{type(batch).__name__} of {len(batch)}: " + ", ".join(describe(v, depth + 1) for v in batch[:8])
    return type(batch).__name__


def _sha256(path: Path) -> str:
    digest, block = hashlib.sha256(), bytearray(_BLOCK)
    view = memoryview(block)
    with open(path, "rb") as handle:
        while size := handle.readinto(block):
            digest.update(view[:size])  # releases the GIL: the pool's threads hash in parallel
    return digest.hexdigest()


def _first_block(path: Path) -> None:
    """Read the file's first block: it opens and reads (permissions, an I/O error)."""
    with open(path, "rb") as handle:
        handle.read(4096)


def _reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
