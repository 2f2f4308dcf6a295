"""Finding failures in raw logs (dmesg, NCCL, SLURM job output, tracebacks), gigabytes at a time.

Each log is read in chunks (:mod:`tooling.failures.reading`) and each chunk goes whole through one
automaton of every recogniser of the catalogue (:class:`~tooling.failures.engine.Matcher`); only
the lines it flags are decoded and looked at in Python, where :func:`recognise` names their
failure mode and :mod:`tooling.failures.context` their time, host and rank. Python tracebacks and
torchrun's failure summary span lines: :mod:`tooling.failures.blocks` reads them. Hits become
drafts (:mod:`tooling.failures.drafts`); nothing kept grows with the size of the log.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from tooling.failures import blocks
from tooling.failures.catalogue import catalogue
from tooling.failures.context import Context, When, context, leading_time
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
        chunks, unfinished = self.chunks, False
        while usable := chunks.fill():
            done = self._chunk(usable)
            self.line += chunks.buffer.count(b"\n", 0, done)
            unfinished = chunks.buffer[done - 1] != ord("\n")
            chunks.consume(done)
        return LogStats(chunks.name, self.line - 1 + unfinished, self.hits)

    def _chunk(self, usable: int) -> int:
        """Handle the flagged lines of the buffer's first ``usable`` bytes; return how many bytes
        are done (fewer when a traceback runs past the end: it is read again with the next chunk)."""
        buffer = self.chunks.buffer
        starts = sorted({buffer.rfind(b"\n", 0, end - 1) + 1 for end in matcher().ends(buffer, usable) if end})
        skip: set[int] = set()  # lines inside a traceback or a summary: read with it, not alone
        cursor, line = 0, self.line
        for start in starts:
            line += buffer.count(b"\n", cursor, start)
            cursor = start
            if start not in skip and self._line(start, line, usable, skip) is blocks.INCOMPLETE:
                if start > 0 and not self.chunks.eof:
                    return start
        return usable

    def _line(self, start: int, line: int, limit: int, skip: set[int]) -> object:
        buffer = self.chunks.buffer
        text = clean(blocks.decode(buffer, start, limit)[0])
        where = context(text, self.now)
        when, time_from = self._time(where.when, start, line)
        if blocks.is_traceback(text):
            found = blocks.exception_line(buffer, start, limit)
            if isinstance(found, blocks.Found):
                skip.update(found.body, (found.start,))
                since = time_from if time_from is not None else line
                self._exception(found.start, line + found.lines, limit, skip, (when, since if when else None))
            return found
        recognition = recognise_line(text[:where.time[0]] + text[where.time[1]:])
        if recognition.mode is not None:
            self._hit(text, where, recognition, (when, time_from), start, line, limit, skip)
        return None

    def _exception(self, start: int, line: int, limit: int, skip: set[int],
                   header_time: tuple[When | None, int | None]) -> None:
        """A traceback's last line is its signature: the exception, whatever its mode."""
        text = clean(blocks.decode(self.chunks.buffer, start, limit)[0])
        where = context(text, self.now)
        recognition = recognise_line(text[:where.time[0]] + text[where.time[1]:])
        if recognition.mode is None:  # an exception nothing in the catalogue names: a bug
            recognition = Recognition(catalogue().get("software.bug"), recognition.codes, "a traceback")
        if recognition.mode is not None:
            when = (where.when, None) if where.when and where.when.at else header_time
            self._hit(text, where, recognition, when, start, line, limit, skip)

    def _hit(self, text: str, where: Context, recognition: Recognition, when: tuple[When | None, int | None],
             start: int, line: int, limit: int, skip: set[int]) -> None:
        nodes = [where.host] if where.host else []
        ranks = [where.rank] if where.rank is not None else []
        entries: list[blocks.Entry] = []
        if "ChildFailedError" in text:
            summary = blocks.torchrun_summary(self.chunks.buffer, self.chunks.buffer.find(b"\n", start, limit) + 1,
                                              limit, self.now)
            skip.update(summary.body)
            nodes, ranks, entries = nodes + summary.hosts, ranks + summary.ranks, summary.entries
            if when[0] is None and summary.when is not None:
                when = (summary.when, None)
        self._add(line, text, normalise(text[where.message:]), recognition, when, nodes, ranks)
        for entry in entries:  # "exitcode  : -9" says how a rank died (here: killed, out of memory)
            died = recognise_line(entry.text)
            if died.mode is not None and entry.text:
                self._add(line + entry.lines, clean(entry.text), normalise(entry.text), died,
                          (entry.when, None) if entry.when else when, list(entry.hosts), list(entry.ranks))

    def _add(self, line: int, text: str, form: str, recognition: Recognition,
             when: tuple[When | None, int | None], nodes: list[str], ranks: list[int]) -> None:
        self.hits += 1
        self.book.add(Hit(self.chunks.name, line, text, form, recognition, when[0], when[1],
                          tuple(dict.fromkeys(nodes)), tuple(dict.fromkeys(ranks))))

    def _time(self, own: When | None, start: int, line: int) -> tuple[When | None, int | None]:
        """The line's own time, else that of the nearest line above it that has one (a
        traceback's last line has no time; the step log above it does)."""
        offset = self.chunks.offset
        if own is not None and own.at is not None:
            self.last_time = (offset + start, line, own)
            return own, None
        known = self.last_time if self.last_time and self.last_time[0] >= offset else None
        lo = known[0] - offset if known else 0
        end = start
        for back in range(1, LOOK_BACK + 1):
            if end <= lo:
                break
            begin = self.chunks.buffer.rfind(b"\n", 0, end - 1) + 1
            found = leading_time(blocks.decode(self.chunks.buffer, begin, end)[0], self.now)
            if found is not None and found.at is not None:
                self.last_time = (offset + begin, line - back, found)
                return found, line - back
            end = begin
        if known is not None and end <= lo:
            return known[2], known[1]
        return own, None
