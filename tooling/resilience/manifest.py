"""The manifest of a checkpoint folder: which files are checkpoints, with their size and CRC-32.

Only plain names of the form ``ckpt-NNNNNNNN.pt`` are ever taken from a manifest, so a
hand-edited or hostile entry (``../outside/x``, an absolute path) is ignored, never opened and
never deleted. A manifest that is missing, not a regular file, not JSON or not of the expected
shape reads as ``None``: the caller then rebuilds the list from the checkpoint files that
verify on their own, by the CRC-32 that the zip container torch.save writes keeps per member.
"""
from __future__ import annotations

import json
import os
import re
import stat
import time
import warnings
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

from tooling.fs.atomic import replace_file

MANIFEST = "manifest.json"
NAME = re.compile(r"^ckpt-(\d{8,})\.pt\Z")  # 8 digits, more past step 99,999,999
# temporary files only a manager holding the folder's writer lock creates (see is_temporary)
_TEMPORARY = re.compile(r"^(\.ckpt-\d{8,}\.pt(\.retired)?|\.manifest\.json\.[A-Za-z0-9_]+)\.tmp\Z")
_CRC = re.compile(r"^[0-9a-f]{8}\Z")
T = TypeVar("T")


@dataclass(frozen=True)
class Entry:
    step: int
    file: str
    crc32: str
    bytes: int


def checkpoint_name(step: int) -> str:
    return f"ckpt-{step:08d}.pt"


def is_temporary(name: str) -> bool:
    """A checkpoint or manifest being written, or a rotated-out checkpoint being deleted, as
    the writer names them: .ckpt-NNNNNNNN.pt.tmp, .manifest.json.XXXX.tmp, .ckpt-NNNNNNNN.pt.retired.tmp."""
    return _TEMPORARY.match(name) is not None


def crc32_of(handle: IO[bytes]) -> str:
    """CRC-32 of an open file from its start: catches torn and truncated writes at memory speed."""
    handle.seek(0)
    crc, block = 0, bytearray(1 << 20)  # one buffer, refilled: no fresh pages per read
    view = memoryview(block)
    while size := handle.readinto(block):  # type: ignore[attr-defined]
        crc = zlib.crc32(view[:size], crc)  # releases the GIL on large blocks
    return f"{crc:08x}"


def matches(handle: IO[bytes], entry: Entry) -> bool:
    """Whether the open file has the size and CRC-32 the manifest recorded."""
    return os.fstat(handle.fileno()).st_size == entry.bytes and crc32_of(handle) == entry.crc32


def zip_intact(handle: IO[bytes]) -> bool:
    """Whether the open file is a torch.save zip whose every member matches its stored CRC-32.

    The check for a checkpoint no manifest vouches for: a truncated file loses the zip's
    central directory (at the end), a torn one fails a member's CRC.
    """
    handle.seek(0)
    try:
        with zipfile.ZipFile(handle) as archive:
            names = archive.namelist()
            return any(n.endswith("/data.pkl") for n in names) and archive.testzip() is None
    except Exception:  # any way a damaged or foreign file can make zipfile fail means "no"
        return False


def parse_entry(raw: Any) -> Entry:
    """One manifest entry (or one shard of a sharded checkpoint), its types checked; raises
    ValueError on a wrong shape."""
    if not isinstance(raw, dict) or set(raw) != {"step", "file", "crc32", "bytes"}:
        raise ValueError(f"not a checkpoint entry: {raw!r}")
    step, file, crc, size = raw["step"], raw["file"], raw["crc32"], raw["bytes"]
    for value, kind in ((step, int), (size, int), (file, str), (crc, str)):
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ValueError(f"not a checkpoint entry: {raw!r}")
    if step < 0 or size < 0 or not _CRC.match(crc):
        raise ValueError(f"not a checkpoint entry: {raw!r}")
    return Entry(step, file, crc, size)


def manifest_state(directory: Path, name: str = MANIFEST) -> tuple[int, int, int] | None:
    """(inode, mtime, size) of the manifest: every rewrite is a rename, so a new inode."""
    try:
        info = os.stat(directory / name)
    except OSError:
        return None
    return info.st_ino, info.st_mtime_ns, info.st_size


def read_listing(path: Path, parse: Callable[[Any], T]) -> list[T] | None:
    """The entries of a manifest file, each through ``parse``; None when the file is missing, not
    a regular file, not JSON, not ``{"checkpoints": [...]}`` or when ``parse`` raises ValueError
    on one entry (the caller then falls back to the checkpoints themselves)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):  # a folder, a link, a FIFO that would block
            return None
        data = json.loads(path.read_bytes())
        if not isinstance(data, dict) or not isinstance(data.get("checkpoints"), list):
            return None
        return [parse(raw) for raw in data["checkpoints"]]
    except (OSError, ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError are ValueErrors;
        return None  # RecursionError: JSON nested a hundred thousand deep


def write_listing(path: Path, entries: list[Any]) -> None:
    """Atomically replace the manifest file ``path`` (temporary file, fsync, rename, directory fsync)."""
    replace_file(path, json.dumps({"checkpoints": [asdict(e) for e in entries]}, indent=1))


def read_manifest(directory: Path) -> list[Entry] | None:
    """The manifest's entries, oldest first; None when it is missing or unreadable.

    Entries whose file is not the plain name of their step are left out (and so never
    opened or deleted); any other deviation from the expected shape makes the whole
    manifest unreadable, so that the caller falls back to the files themselves.
    """
    entries = read_listing(directory / MANIFEST, parse_entry)
    if entries is None:
        return None
    named = {e.step: e for e in entries if e.file == checkpoint_name(e.step)}
    return [named[step] for step in sorted(named)]


def write_manifest(directory: Path, entries: list[Entry]) -> None:
    """Atomically replace the manifest (temporary file, fsync, rename, directory fsync)."""
    write_listing(directory / MANIFEST, entries)


def set_aside_manifest(directory: Path, rebuilt: int, name: str = MANIFEST) -> None:
    """Move an unreadable manifest out of the way, not deleted: it may be another tool's, or evidence."""
    path = directory / name
    if os.path.lexists(path):
        aside = path.with_name(f"{name}.unreadable-{time.time_ns()}")
        os.rename(path, aside)
        warnings.warn(f"{path} was unreadable: moved to {aside.name}; the manifest is rebuilt from the "
                      f"{rebuilt} checkpoint(s) that verify", stacklevel=4)


def checkpoint_files(directory: Path) -> list[tuple[int, str]]:
    """(step, name) of every file named exactly as its step's checkpoint, newest first."""
    try:
        names = [p.name for p in directory.iterdir()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = [(int(m.group(1)), name) for name in names if (m := NAME.match(name))]
    return sorted((step, name) for step, name in found if name == checkpoint_name(step))[::-1]


def rebuild(directory: Path) -> list[Entry]:
    """Entries for the checkpoint files that verify by their zip CRCs, oldest first."""
    entries = []
    for step, name in checkpoint_files(directory):
        try:
            with open(directory / name, "rb") as handle:
                if zip_intact(handle):
                    entries.append(Entry(step, name, crc32_of(handle), os.fstat(handle.fileno()).st_size))
        except OSError:  # removed meanwhile, or not a readable file: not a checkpoint to name
            continue
    return entries[::-1]
