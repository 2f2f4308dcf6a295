"""Reading logs in large chunks that end at line breaks: files, standard input, gzip.

A chunk is one reused buffer (nothing grows with the file); each holds whole lines but the last
one, which moves to the front of the next. A line longer than the buffer is cut where the buffer
ends. The last lines consumed stay readable above the buffer's first (:attr:`Chunks.earlier`): a
reader that looks back above a line sees what it would see were the log one chunk. Problems with
a log are one-line :class:`~tooling.errors.UserError` naming it.
"""
from __future__ import annotations

import gzip
import io
import re
import sys
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator

from tooling.errors import UserError

CHUNK = 8 << 20  # large enough that per-chunk work vanishes, small enough to stay out of the way
# bytes of whole lines consumed kept above the buffer's start: the few lines a reader looks back at
# (a traceback's preamble, tooling.logs.unknown.PREAMBLE), however long, whichever poll or chunk read them
EARLIER = 64 << 10
SAMPLE = 8192  # bytes looked at to tell a text log from binary data
PADDING = 4  # NUL bytes in a row that are padding, not data (see check_text)
_NULS = re.compile(rb"\0+")
EXPECTED = "expected a text log (dmesg, NCCL, SLURM output, tracebacks), gzipped or not"
_GZIP_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error)


def log_name(path: Path) -> str:
    """A log as its lines are named: as the user named it ('standard input' for -), never rewritten."""
    return "standard input" if str(path) == "-" else str(path)


@contextmanager
def open_log(path: Path) -> Iterator[BinaryIO]:
    """The log's bytes, decompressed when it starts like gzip (whatever its name)."""
    if str(path) == "-":
        raw: BinaryIO = sys.stdin.buffer
        yield _maybe_gzip(raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw))  # type: ignore[arg-type]
        return
    if path.is_dir():
        raise UserError(f"{path}: is a directory; {EXPECTED}")
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file; {EXPECTED}") from None
    except PermissionError:
        raise UserError(f"{path}: permission denied; expected a log this user may read") from None
    with handle:
        yield _maybe_gzip(handle)


def _maybe_gzip(stream: io.BufferedReader) -> BinaryIO:
    return gzip.GzipFile(fileobj=stream, mode="rb") if stream.peek(2)[:2] == b"\x1f\x8b" else stream  # type: ignore[return-value]


class Chunks:
    """``fill()`` reads up to the buffer's size and says how much of it ends at a line break;
    ``consume(n)`` drops the first ``n`` bytes, keeping the rest for the next fill."""

    def __init__(self, stream: BinaryIO, name: str, size: int = CHUNK) -> None:
        self.stream, self.name = stream, name
        self.buffer = bytearray(size)
        self.filled = 0
        self.offset = 0  # of buffer[0] in the log
        self.eof = False
        self._checked = False
        self.earlier = b""  # the last whole lines consumed (EARLIER bytes at most), nearest last

    polled = False  # chunks that end where a growing file ends for now (tooling.watch.tail.Tail)

    @property
    def ended(self) -> bool:
        """Whether the log has ended, not only what is written of it so far: a failure seen at
        its end ended it (tooling.logs.unknown)."""
        return self.eof

    def fill(self) -> int:
        with memoryview(self.buffer) as view:
            while self.filled < len(self.buffer) and not self.eof:
                got = self._read(view[self.filled:])
                self.eof = got == 0
                self.filled += got
        if not self._checked:
            self._checked = True
            check_text(self.name, bytes(self.buffer[:min(self.filled, SAMPLE)]))
        if self.eof or self.filled == 0:
            return self.filled
        cut = self.buffer.rfind(b"\n", 0, self.filled) + 1
        return cut or self.filled  # one line longer than the buffer: cut it where the buffer ends

    def consume(self, count: int) -> None:
        self.earlier = last_lines((self.earlier if count < EARLIER else b"")
                                  + bytes(self.buffer[max(0, count - EARLIER):count]), cut=count >= EARLIER)
        rest = self.filled - count
        self.buffer[:rest] = self.buffer[count:self.filled]
        self.filled, self.offset = rest, self.offset + count

    def _read(self, into: memoryview) -> int:
        try:
            return self.stream.readinto(into)  # type: ignore[attr-defined]
        except _GZIP_ERRORS as exc:
            raise UserError(f"{self.name}: not a valid gzip file ({exc}); {EXPECTED}") from None
        except OSError as exc:
            raise UserError(f"{self.name}: could not be read ({exc.strerror or exc})") from None


def last_lines(data: bytes, *, cut: bool = False) -> bytes:
    """The whole lines that end ``data``, EARLIER bytes at most (``cut``: its first line lost its
    start, a line longer than that none)."""
    if len(data) <= EARLIER and not cut:
        return data
    at = data.find(b"\n", len(data) - min(len(data), EARLIER))
    return data[at + 1:] if at >= 0 else b""


def check_text(name: str, sample: bytes) -> None:
    """Refuse binary data early: in the first bytes, more than a tenth that are not text (not
    UTF-8, or NUL). NUL bytes in a run of PADDING or more, or at the end, are not counted: a file
    system that crashed leaves the unwritten part of a log's last block as NULs, and a log cut
    by a crash is what an incident needs read (they are read anywhere in a log, as the bytes
    around them: tooling.logs.flagged.line_start). Binary files have NULs alone or in pairs between other
    bytes (a NUL between every two characters: UTF-16)."""
    runs = list(_NULS.finditer(sample))
    padding = [run for run in runs if run.end() - run.start() >= PADDING or run.end() == len(sample)]
    stray = [run.start() for run in runs if run not in padding]
    length = len(sample) - sum(run.end() - run.start() for run in padding)  # text, stray NULs included
    bad = len(sample) - len(sample.decode("utf-8", "ignore").encode("utf-8")) + len(stray)
    if stray and bad > length // 10:
        raise UserError(f"{name}: binary data (a NUL byte at offset {stray[0]}), not a log; {EXPECTED}")
    if bad > length // 10:
        raise UserError(f"{name}: binary data ({bad} of its first {len(sample)} bytes are not UTF-8 text), "
                        f"not a log; {EXPECTED}")
