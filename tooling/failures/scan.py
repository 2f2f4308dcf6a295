"""Finding failures in raw logs (dmesg, NCCL, SLURM job output, tracebacks), gigabytes at a time.

Each log is read in chunks (:mod:`tooling.failures.reading`) and each chunk goes whole through one
automaton of every recogniser of the catalogue (:class:`~tooling.failures.engine.Matcher`); only
the lines it flags are decoded and looked at in Python, where :func:`recognise` names their
failure mode and :mod:`tooling.failures.context` their time, host and rank. Python tracebacks and
torchrun's failure summary span lines: :mod:`tooling.failures.blocks` reads them. Hits become
drafts (:mod:`tooling.failures.drafts`); nothing kept grows with the size of the log.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from tooling.failures import blocks
from tooling.failures.catalogue import catalogue
from tooling.failures.context import Context, When, context, time_at
from tooling.failures.drafts import Draft, DraftBook, Hit
from tooling.failures.engine import Matcher
from tooling.failures.reading import Chunks, display, open_log
from tooling.failures.recognise import Recognition, recogniser
from tooling.failures.signatures import normalise
from tooling.records.characters import first_bad

MAX_LINE = 2000  # characters of a line kept as a signature
LOOK_BACK = 50  # lines searched above a line without a time for the time it happened at
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")  # colour and cursor sequences of a terminal log


@dataclass(frozen=True)
class LogStats:
    name: str
    lines: int
    hits: int


@dataclass(frozen=True)
class ScanResult:
    drafts: list[Draft]
    logs: list[LogStats]
    consequences: int  # lines taken as the aftermath of a failure drafted (see drafts.AFTERMATH)
    dropped: int  # lines of failures beyond drafts.MAX_DRAFTS


@lru_cache(maxsize=1)
def matcher() -> Matcher:
    """Every recogniser of the catalogue and the start of a traceback, in one automaton."""
    patterns = [p for mode in catalogue().modes for p in mode.recognisers]
    return Matcher([*patterns, blocks.TRACEBACK_PATTERN])


@lru_cache(maxsize=4096)
def recognise_line(key: str) -> Recognition:
    """Bounded cache: the shared one would keep up to 65,536 lines of a big log alive."""
    return recogniser().line(key)


def clean(raw: bytes) -> str:
    """A line as text a record may hold: terminal colour codes dropped, a tab made a space, other
    control characters (and bytes that are not UTF-8) made U+FFFD, cut at MAX_LINE characters."""
    text = _ANSI.sub("", raw.decode("utf-8", "replace").rstrip("\r\n")).replace("\t", " ")
    if len(text) > MAX_LINE:
        text = text[:MAX_LINE] + " …"
    while (bad := first_bad(text)) is not None:
        text = text[:bad[0]] + "\ufffd" + text[bad[0] + 1:]
    return text


def scan_logs(paths: Sequence[Path], *, now: datetime) -> ScanResult:
    """Drafts of every distinct failure in the logs (``-``: standard input), in bounded memory."""
    book = DraftBook()
    stats = []
    for path in paths:
        book.start()
        with open_log(path) as stream:
            stats.append(_Scanner(Chunks(stream, display(path)), book, now).run())
    return ScanResult(book.result(), stats, book.consequences, book.dropped)


class _Scanner:
    def __init__(self, chunks: Chunks, book: DraftBook, now: datetime) -> None:
        self.chunks, self.book, self.now = chunks, book, now
        self.line = 1  # number of the line at the start of the buffer
        self.hits = 0
        self.last_time: tuple[int, int, When] | None = None  # (offset in the log, line, time)

    def run(self) -> LogStats:
        chunks = self.chunks
        while usable := chunks.fill():
            done = self._chunk(usable)
            self.line += chunks.buffer.count(b"\n", 0, done)
            chunks.consume(done)
        return LogStats(self.chunks.name, self.line - 1 + (chunks.filled > 0), self.hits)

    def _chunk(self, usable: int) -> int:
        """Handle the flagged lines of the buffer's first ``usable`` bytes; return how many bytes
        are done (fewer when a traceback runs past the end: it is read again with the next chunk)."""
        buffer = self.chunks.buffer
        starts = sorted({buffer.rfind(b"\n", 0, end - 1) + 1 for end in matcher().ends(buffer, usable) if end})
        walk = blocks.Walk(buffer, usable, final=self.chunks.eof)
        cursor, line = 0, self.line
        index = 0
        while index < len(starts):
            start = starts[index]
            index += 1
            line += buffer.count(b"\n", cursor, start)
            cursor = start
            if start in walk.skip:
                continue
            outcome = self._line(walk, start, line)
            if outcome is blocks.INCOMPLETE and start > 0 and not self.chunks.eof:
                return start
            for later in walk.found:
                if later not in starts[index:]:
                    bisect.insort(starts, later, lo=index)
            walk.found.clear()
        return usable

    def _line(self, walk: blocks.Walk, start: int, line: int) -> object:
        buffer = self.chunks.buffer
        end = buffer.find(b"\n", start, walk.limit)
        text = clean(bytes(buffer[start:end if end >= 0 else walk.limit]))
        where = context(text, self.now)
        when, time_from = self._time(where.when, start, line, text)
        inherited = walk.times.pop(start, None)
        if inherited is not None and when is None:
            when, time_from = inherited
        if blocks.is_traceback(text):
            return walk.traceback(start, text, (when, time_from if time_from is not None else line))
        recognition = recognise_line(text[where.message:] if where.when else text)
        if recognition.mode is None:
            recognition = walk.exception_mode.pop(start, recognition)
            if recognition.mode is None:
                return None
        summary = blocks.torchrun_summary(buffer, end, walk.limit, self.now) if "ChildFailedError" in text else None
        self._hit(text, where, recognition, when, time_from, line, summary)
        return None

    def _hit(self, text: str, where: Context, recognition: Recognition, when: When | None,
             time_from: int | None, line: int, summary: blocks.Summary | None) -> None:
        nodes = [where.host] if where.host else []
        ranks = [where.rank] if where.rank is not None else []
        if summary is not None:
            nodes += summary.hosts
            ranks += summary.ranks
            when, time_from = (summary.when, None) if when is None and summary.when else (when, time_from)
        self.hits += 1
        self.book.add(Hit(self.chunks.name, line, text, normalise(text[where.message:]), recognition, when,
                          time_from, tuple(dict.fromkeys(nodes)), tuple(dict.fromkeys(ranks))))
        for extra in summary.exits if summary else ():
            self.hits += 1
            self.book.add(Hit(self.chunks.name, line + extra.offset, extra.text, normalise(extra.text),
                              extra.recognition, extra.when or when, None, extra.hosts, extra.ranks))

    def _time(self, own: When | None, start: int, line: int, text: str) -> tuple[When | None, int | None]:
        """The line's own time, else that of the last line above it that has one (a traceback's
        last line has no time; the step log above it does)."""
        if own is not None and own.at is not None:
            self.last_time = (self.chunks.offset + start, line, own)
            return own, None
        buffer, lo = self.chunks.buffer, 0
        if self.last_time is not None:
            lo = max(0, self.last_time[0] - self.chunks.offset)
        end, back = start, 0
        while end > lo and back < LOOK_BACK:
            begin = buffer.rfind(b"\n", 0, end - 1) + 1
            back += 1
            found, _ = time_at(clean(bytes(buffer[begin:end])), 0, self.now)
            if found is not None and found.at is not None:
                return found, line - back
            end = begin
        if self.last_time is not None and end <= lo:
            return self.last_time[2], self.last_time[1]
        return own, None
