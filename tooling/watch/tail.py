"""One open file of a followed log, read again at every poll from where the last poll stopped.

:class:`Tail` gives ``tooling scan``'s :class:`~tooling.logs.scan.Scanner` chunks that end
where the file ends for now, and only complete lines: a partial last line waits for its line
break (unless the file is ``final``, done growing). A poll reads at most a budget of bytes, so
that a large backlog is filed and its offset saved piece by piece. A block that runs past the
end (a traceback still being written) waits for the next poll, until the file has been quiet
for :data:`SETTLE` seconds: then it is read as it is.
"""
from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path

from tooling.errors import UserError
from tooling.logs import blocks
from tooling.logs.chunks import CHUNK, EARLIER, SAMPLE, Chunks, check_text, last_lines
from tooling.logs.context import log_zone
from tooling.logs.draft_book import DraftBook
from tooling.logs.flagged import clean
from tooling.logs.scan import Scanner
from tooling.logs.timeline import ZONE_BYTES, ZONE_SAMPLE
from tooling.watch.files import HEAD, Position, digest, ending, fingerprint
from tooling.watch.progress import last_progress

SETTLE = 2.0  # seconds without growth after which a file is taken as written out, for now or for good


class Tail(Chunks):
    """Chunks of a growing file, from ``offset``, read with pread (no file position to keep)."""

    def __init__(self, fd: int, name: str, offset: int, size: int = CHUNK) -> None:
        super().__init__(None, name, size)  # type: ignore[arg-type]
        self.fd, self.offset = fd, offset
        self.budget = 0  # bytes this poll may still read
        self.final = False  # done growing: its partial last line is a line too
        self.settled = False  # final, or quiet for now (set at each poll)
        self._drained = False  # the last read found the end of the file (not the end of a budget)
        self._usable = 0  # what fill returned last
        self._pending = False  # complete lines were left for later (a block cut by the end)
        self._checked = offset > 0  # binary data is refused at a file's start only
        size = min(EARLIER, offset)  # the lines above where it reads on (a reader looks back at them: Chunks.earlier)
        read = os.pread(fd, size, offset - size) if size else b""
        self.earlier = last_lines(read, cut=offset > EARLIER)
        self.before = read[-HEAD:]  # the last bytes before offset: what tells a file emptied and regrown

    polled = True  # a line at the buffer's start may wait: the poll ends, and the next reads on

    @property
    def ended(self) -> bool:
        """Only a file done growing has ended: a writer that paused may write on."""
        return self.eof and self.final

    def fill(self) -> int:
        fresh = self._read_some()
        if not self._checked and self.filled:  # its first bytes, again while they are fewer than a sample
            sample = os.pread(self.fd, SAMPLE, 0)
            self._checked = len(sample) == SAMPLE
            check_text(self.name, sample)
        self.eof = self.settled and self._drained  # a budget that ran out is no end: the file goes on
        leftover = self.filled > 0 and (self._pending or self.final)
        if not fresh and not (self.eof and leftover):
            return 0  # nothing new since the last chunk: the poll is over
        if self.final and self.eof:
            usable = self.filled
        else:
            cut = self.buffer.rfind(b"\n", 0, self.filled) + 1
            usable = cut or (self.filled if self.filled == len(self.buffer) else 0)  # a line longer than the buffer is cut
        self._usable = usable
        return usable

    def consume(self, count: int) -> None:
        self._pending = count < self._usable
        self.before = (self.before + bytes(self.buffer[max(0, count - HEAD):count]))[-HEAD:]
        super().consume(count)

    def _read_some(self) -> int:
        fresh = 0
        with memoryview(self.buffer) as view:
            while self.filled < len(self.buffer) and self.budget > 0:
                room = min(len(self.buffer) - self.filled, self.budget)
                got = self._read(view[self.filled:self.filled + room])
                self._drained = not got
                if not got:
                    break
                self.filled, self.budget, fresh = self.filled + got, self.budget - got, fresh + got
        return fresh

    def _read(self, into: memoryview) -> int:
        try:
            return os.preadv(self.fd, [into], self.offset + self.filled)
        except OSError as exc:
            raise UserError(f"{self.name}: could not be read ({exc.strerror or exc})") from None


class Following(Scanner):
    """The scanner of a followed file, noting the last progress line of each chunk it reads."""

    progress: tuple[int, str] | None = None  # (line number, text) of the last one read

    def chunk_done(self, done: int) -> None:
        buffer = self.chunks.buffer
        start = last_progress(buffer, done)
        if start is not None:
            self.progress = (self.line + buffer.count(b"\n", 0, start), clean(blocks.decode(buffer, start, done)[0]))


class OpenFile:
    """A file of a followed log, open for as long as it is followed; ``name`` is the log's."""

    def __init__(self, path: Path, name: str, book: DraftBook, now: datetime, at: Position | None = None,
                 *, final: bool = False) -> None:
        self.path, self.name, self.book = path, name, book
        self.fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        self.tail = Tail(self.fd, name, at.offset if at else 0)
        self.tail.final = final
        self.scanner = Following(self.tail, book, now)
        self.known = (at.head, at.head_bytes) if at else fingerprint(self.fd, os.fstat(self.fd).st_size)
        # what the bytes before the offset were when read (an offset file of an older version
        # does not say: they are taken as they are now)
        self.ended = (at.end, at.end_bytes) if at and at.end is not None else digest(self.tail.before)
        self.after: Scanner | None = None  # the file's before it (set by its log): read on from it (Scanner.follow)
        if at is not None and at.offset > 0:
            self.scanner.line = at.line
            head = os.pread(self.fd, min(ZONE_BYTES, at.offset), 0).decode("utf-8", "replace")
            self.scanner.timeline.zone = log_zone(head.split("\n", ZONE_SAMPLE)[:ZONE_SAMPLE], now)

    def read(self, *, now: datetime, budget: int, final: bool = False) -> tuple[int, bool]:
        """Read what was written since the last poll: (lines read, whether the budget ran out)."""
        tail, scanner = self.tail, self.scanner
        tail.final = tail.final or final
        tail.settled = tail.final or self.quiet()
        tail.budget, scanner.now, scanner.progress = budget, now, None
        before = scanner.line
        stats = scanner.run()
        self.ended = digest(tail.before)
        return stats.lines - (before - 1), tail.budget == 0

    def quiet(self) -> bool:
        """Whether the file has not grown for SETTLE seconds (by the file system's clock)."""
        return time.time() - os.fstat(self.fd).st_mtime >= SETTLE

    def drained(self) -> bool:
        """Everything it holds is read, the partial last line included."""
        return self.tail.filled == 0 and self.tail.offset >= os.fstat(self.fd).st_size

    def truncated(self) -> bool:
        """Emptied (copytruncate) or rewritten since it was read: shorter than what was read, other
        first bytes, or other bytes before where it was read to (it grew back past that point)."""
        size = os.fstat(self.fd).st_size
        return (size < self.tail.offset + self.tail.filled or fingerprint(self.fd, self.known[1]) != self.known
                or ending(self.fd, self.tail.offset) != self.ended)

    def read_to(self) -> Position:
        """How far it was read (its first bytes as they were when read)."""
        info = os.fstat(self.fd)
        return Position(info.st_dev, info.st_ino, self.tail.offset, self.scanner.line, *self.known, *self.ended)

    def restart(self, now: datetime) -> None:
        """Read it again from its start (it was emptied): the lines it holds now are new."""
        self.tail = Tail(self.fd, self.name, 0)
        self.scanner = Following(self.tail, self.book, now)
        self.known = fingerprint(self.fd, os.fstat(self.fd).st_size)
        self.ended = digest(b"")

    def position(self) -> Position:
        """How far it was read, to save (its first bytes fingerprinted again while fewer than HEAD)."""
        size = os.fstat(self.fd).st_size
        if self.known[1] < HEAD and size > self.known[1]:
            self.known = fingerprint(self.fd, size)  # more of its first bytes exist now
        return self.read_to()

    def close(self) -> None:
        os.close(self.fd)
