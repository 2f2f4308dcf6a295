"""Which file a followed log is: its inode, where it was read to, and a fingerprint of its first bytes.

A log name is a series of files: logrotate renames the file (``train.log`` -> ``train.log.1``) and
the writer opens a new one, or copies it (``copytruncate``) and empties the original. The device
and inode say which file a name holds now; the fingerprint (a hash of the first :data:`HEAD`
bytes) says whether a file is still the one that was read: an emptied and rewritten file, or a
new file that got a freed inode number, has other first bytes. Rotated files are looked for
beside the log, named after it (``train.log.1``, ``train.log-20261102``); compressed ones cannot
be read on and are skipped.
"""
from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from tooling.errors import UsageError, UserError
from tooling.failures.reading import SAMPLE, check_text

HEAD = 1024  # bytes fingerprinted: more than one line of any log, one read
COMPRESSED = (".gz", ".xz", ".bz2", ".zst", ".lz4", ".z")
GZIP = b"\x1f\x8b"


@dataclass(frozen=True)
class Position:
    """A file of a followed log and how far it was read (its complete lines, up to ``offset``)."""
    dev: int
    inode: int
    offset: int  # bytes read, up to the end of the last complete line
    line: int  # number of the line that starts at offset
    head: str  # fingerprint of the first head_bytes bytes
    head_bytes: int

    def same_file(self, info: os.stat_result) -> bool:
        return (info.st_dev, info.st_ino) == (self.dev, self.inode)


def fingerprint(fd: int, size: int) -> tuple[str, int]:
    """The hash of a file's first bytes (up to HEAD, as many as it has), and how many."""
    data = os.pread(fd, min(HEAD, size), 0)
    return hashlib.sha256(data).hexdigest()[:32], len(data)


def holds(fd: int, position: Position) -> bool:
    """Whether the open file still starts as it did and is not shorter than was read."""
    info = os.fstat(fd)
    if info.st_size < max(position.offset, position.head_bytes):
        return False
    return fingerprint(fd, position.head_bytes) == (position.head, position.head_bytes)


def siblings(path: Path) -> list[Path]:
    """Rotated files of the log beside it, newest first (compressed ones left out)."""
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    found = []
    for name in names:
        rest = name[len(path.name):]
        if name.startswith(path.name) and rest[:1] in (".", "-", "_") and not rest.lower().endswith(COMPRESSED):
            candidate = path.parent / name
            try:
                found.append((candidate.stat().st_mtime, candidate))
            except OSError:
                continue
    return [p for _, p in sorted(found, reverse=True)]


def find_rotated(path: Path, position: Position, *, moved: bool) -> Path | None:
    """Where a file read up to ``position`` is now: renamed beside the log (``moved``: by its
    inode), or, after copytruncate, the copy that holds at least what was read (by its first
    bytes). None when it is gone (removed, or compressed)."""
    for candidate in siblings(path):
        try:
            fd = os.open(candidate, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            info = os.fstat(fd)
            if position.same_file(info) == moved and stat.S_ISREG(info.st_mode) and holds(fd, position):
                return candidate
        finally:
            os.close(fd)
    return None


def check_log(path: Path, *, must_exist: bool) -> bool:
    """Refuse what cannot be followed, before anything is written; True when the log exists
    (False: it is waited for)."""
    name = str(path)
    if name == "-":
        raise UsageError("-: standard input cannot be followed; expected log files (read a stream with "
                         "tooling scan -)")
    if path.is_dir():
        raise UserError(f"{name}: is a directory; expected a log file")
    if not path.exists():
        if must_exist:
            raise UserError(f"{name}: no such file; expected a log that exists (without --once, tooling watch "
                            "waits for a log to appear)")
        if not path.parent.is_dir():
            raise UserError(f"{name}: no such folder {path.parent}; expected a log in a folder that exists "
                            "(tooling watch waits for a log to appear, not for its folder)")
        return False
    if not path.is_file():  # a pipe or a device: no offsets to keep, and reading a FIFO would block
        raise UserError(f"{name}: not a regular file; expected a log file")
    try:
        with open(path, "rb") as handle:
            sample = handle.read(SAMPLE)
    except PermissionError:
        raise UserError(f"{name}: permission denied; expected a log this user may read") from None
    except OSError as exc:
        raise UserError(f"{name}: could not be read ({exc.strerror or exc}); expected a log this user may read") from None
    if sample.startswith(GZIP):
        raise UserError(f"{name}: gzip-compressed; expected a plain text log that grows (read a compressed log "
                        "with tooling scan)")
    check_text(name, sample)
    return True
