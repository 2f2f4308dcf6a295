"""Reading a record file's text: a regular file of at most 1 MiB, UTF-8, indented with spaces,
no forbidden characters; anything else is the finding that says why (never a wait on a FIFO)."""
from __future__ import annotations

import errno
import os
import stat

from tooling.records.characters import first_bad
from tooling.records.findings import Finding

MAX_FILE_BYTES = 1 << 20  # a record is a page of text; anything larger is a mistake or an attack


def position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    col = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, col


def read_regular(path: str, limit: int = MAX_FILE_BYTES) -> bytes | Finding:
    """The first ``limit`` + 1 bytes of a regular file (one more than allowed, so that the caller
    can tell a file over the limit); a FIFO or device is refused, never waited on or read for ever."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENOENT and os.path.islink(path):  # its target is not named: it may be outside
            return Finding(path, 1, 1, "unreadable", "cannot read file: a symbolic link to nothing (its target "
                           "does not exist); expected the record itself or a link to it")
        return Finding(path, 1, 1, "unreadable", f"cannot read file: {exc.strerror}")
    wrong = _not_a_file(path, os.fstat(fd).st_mode)
    if wrong is not None:
        os.close(fd)  # before fdopen, which refuses a folder
        return wrong
    with os.fdopen(fd, "rb") as handle:
        try:
            return handle.read(limit + 1)
        except OSError as exc:
            return Finding(path, 1, 1, "unreadable", f"cannot read file: {exc.strerror}")


def _not_a_file(path: str, mode: int) -> Finding | None:
    if stat.S_ISDIR(mode):
        return Finding(path, 1, 1, "not-a-file", "a folder, not a file; expected a record file (only a record "
                       "file's name ends in .yaml or .yml)")
    if not stat.S_ISREG(mode):
        return Finding(path, 1, 1, "not-a-file", "not a regular file (a FIFO, device or socket); "
                       "expected a record file")
    return None


def character_finding(path: str, text: str) -> Finding | None:
    bad = first_bad(text)
    return Finding(path, *position(text, bad[0]), "invalid-character", bad[1]) if bad else None


def read_text(path: str) -> tuple[str | None, Finding | None]:
    """File text, or the finding that explains why it cannot be read as a record."""
    raw = read_regular(path)
    if isinstance(raw, Finding):
        return None, raw
    return decode_text(path, raw)


def decode_text(path: str, raw: bytes) -> tuple[str | None, Finding | None]:
    """The text of a record file's bytes, or the finding that refuses them (also for bytes
    about to be written: a writer refuses what reading would refuse)."""
    if len(raw) > MAX_FILE_BYTES:
        return None, Finding(path, 1, 1, "file-too-large",
                             f"file is larger than {MAX_FILE_BYTES:,} bytes; "
                             "expected a record of at most 1 MiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = raw[: exc.start].decode("utf-8", errors="replace")
        line, col = position(good, len(good))
        return None, Finding(path, line, col, "not-utf8",
                             f"invalid UTF-8 byte 0x{raw[exc.start]:02x}; expected UTF-8 text")
    if text.startswith("\ufeff"):
        text = text[1:]
    tab = text.find("\t")
    if tab >= 0:
        line, col = position(text, tab)
        return None, Finding(path, line, col, "tab-character",
                             "tab character; expected spaces (records are indented with spaces)")
    bad = character_finding(path, text)
    return (None, bad) if bad else (text, None)
