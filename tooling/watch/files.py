"""Which file a followed log is: its inode, where it was read to, and fingerprints of what was read.

A log name is a series of files: logrotate renames the file (``train.log`` -> ``train.log.1``) and
the writer opens a new one, or copies it (``copytruncate``) and empties the original. The device
and inode say which file a name holds now; two fingerprints say whether a file still holds what
was read of it: a hash of its first :data:`HEAD` bytes (a new file that got a freed inode number
has other first bytes) and one of the :data:`HEAD` bytes that end where it was read to. The
second tells an emptied file that grew back past that point before the next poll: a launcher
writes the same banner at the start of every file, but not the same lines at the same offsets.
Rotated files are looked for beside the log, named after it (``train.log.1``,
``train.log-20261102``); compressed ones cannot be read on and are skipped.
"""
from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from tooling.errors import UsageError, UserError
from tooling.logs.chunks import SAMPLE, check_text

HEAD = 1024  # bytes fingerprinted: more than one line of any log, one read
COMPARED = 64 << 10  # bytes of a file and of a copy of it compared, after where it was read
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
    end: str | None = None  # fingerprint of the end_bytes bytes before offset (None: not known)
    end_bytes: int = 0

    def same_file(self, info: os.stat_result) -> bool:
        return (info.st_dev, info.st_ino) == (self.dev, self.inode)


def digest(data: bytes) -> tuple[str, int]:
    """A fingerprint: the hash of some bytes, and how many."""
    return hashlib.sha256(data).hexdigest()[:32], len(data)


def fingerprint(fd: int, size: int) -> tuple[str, int]:
    """The fingerprint of a file's first bytes (up to HEAD, as many as it has)."""
    return digest(os.pread(fd, min(HEAD, size), 0))


def ending(fd: int, offset: int) -> tuple[str, int]:
    """The fingerprint of the bytes of a file that end at ``offset`` (up to HEAD)."""
    size = min(HEAD, offset)
    return digest(os.pread(fd, size, offset - size))


def holds(fd: int, position: Position) -> bool:
    """Whether the open file still holds what was read of it: its first bytes, the bytes up to
    where it was read (as far as they were fingerprinted), and it is not shorter."""
    info = os.fstat(fd)
    if info.st_size < max(position.offset, position.head_bytes):
        return False
    if fingerprint(fd, position.head_bytes) != (position.head, position.head_bytes):
        return False
    return position.end is None or ending(fd, position.offset) == (position.end, position.end_bytes)


def _rotated(path: Path) -> list[tuple[os.stat_result, Path]]:
    """Rotated files of the log beside it, with what stat says of each (compressed ones left out)."""
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
                found.append((candidate.stat(), candidate))
            except OSError:
                continue
    return found


def siblings(path: Path) -> list[Path]:
    """Rotated files of the log beside it, newest first (compressed ones left out)."""
    return [p for _, p in sorted(_rotated(path), key=lambda found: found[0].st_mtime, reverse=True)]


def rotated_beside(path: Path) -> dict[tuple[int, int], Path]:
    """Rotated files of the log beside it, by device and inode."""
    return {(info.st_dev, info.st_ino): p for info, p in _rotated(path)}


def copy_of(fd: int, position: Position, candidates: list[Path]) -> Path | None:
    """Among files new beside the log, the copy copytruncate made of the open file before it
    was emptied and grew back as it was (the same banner, up to where it was read): the copy
    holds what was read, and the open file does not go on as the copy does (a copy of a file
    that only grows is what the file starts with)."""
    for candidate in candidates:
        try:
            copy = os.open(candidate, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            info = os.fstat(copy)
            if (stat.S_ISREG(info.st_mode) and not position.same_file(info) and holds(copy, position)
                    and not _starts(fd, copy, position.offset)):
                return candidate
        finally:
            os.close(copy)
    return None


def _starts(fd: int, part: int, offset: int) -> bool:
    """Whether the file ``fd`` goes on from ``offset`` as ``part`` does, for as long as ``part``
    does (up to COMPARED bytes of it: a backup as long as a log is not read whole at every poll)."""
    if os.fstat(part).st_size > os.fstat(fd).st_size:
        return False
    wanted = os.pread(part, COMPARED, offset)
    return os.pread(fd, len(wanted), offset) == wanted


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
