"""Finding failures in raw logs (dmesg, NCCL, SLURM job output, tracebacks), gigabytes at a time.

Each log is read in chunks (:mod:`tooling.logs.chunks`) and each chunk goes whole through one
automaton of every recogniser of the catalogue (:func:`tooling.logs.flagged.matcher`); only the
lines it flags are decoded and looked at in Python, where the catalogue's recogniser
(:mod:`tooling.catalogue.recognise`) names their failure mode and :mod:`tooling.logs.context`
their time, host and rank. Python tracebacks and torchrun's failure summary span lines:
:mod:`tooling.logs.blocks` reads them. The :class:`Scanner` is three layers, each in its module:
this one's loop over the chunks, :class:`~tooling.logs.reader.LineReader` for each flagged line
and :class:`~tooling.logs.recorder.Recorder` for the hits they become. Hits become drafts
(:mod:`tooling.logs.drafts`); nothing kept grows with the size of the log.
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate
from datetime import datetime
from pathlib import Path
from typing import Sequence

from tooling.catalogue.modes import catalogue
from tooling.catalogue.recognise import Recognition
from tooling.logs import unknown, wrapped
from tooling.logs.chunks import CHUNK, Chunks, log_name, open_log
from tooling.logs.draft_book import DraftBook
from tooling.logs.drafts import Draft
from tooling.logs.flagged import clean, line_start, matcher
from tooling.logs.reader import LineReader
from tooling.logs.unknown import UNCLASSIFIED

ENDING = 4096  # bytes of a log's end kept to read its last lines (tooling.logs.unknown.killed_unsaid)


@dataclass(frozen=True)
class LogStats:
    name: str
    lines: int
    hits: int


@dataclass(frozen=True)
class ScanResult:
    drafts: list[Draft]
    logs: list[LogStats]
    consequences: int  # lines taken as the aftermath of another failure (see tooling.logs.aftermath)
    dropped: int  # lines of failures beyond draft_book.MAX_DRAFTS


def scan_logs(paths: Sequence[Path], *, now: datetime, chunk: int = CHUNK) -> ScanResult:
    """Drafts of every distinct failure in the logs (``-``: standard input), in bounded memory."""
    book = DraftBook()
    stats = []
    for path in paths:
        with open_log(path) as stream:
            scanner = Scanner(Chunks(stream, log_name(path), chunk), book, now)
            stats.append(scanner.run())
            scanner.ended()
        book.finish()
    return ScanResult(book.result(), stats, book.consequences, book.dropped)


class Scanner(LineReader):
    """Reads one log from ``chunks`` into ``book``: :meth:`run` until ``chunks`` has no more.

    tooling watch runs one per followed file again at every poll, with chunks that end where the
    file ends for now (:class:`tooling.watch.tail.Tail`): :attr:`line` and the :attr:`timeline`
    carry over (from one file of a rotated log to the next too: :meth:`follow`), and
    :meth:`chunk_done` is where it looks for progress lines.
    """

    def __init__(self, chunks: Chunks, book: DraftBook, now: datetime) -> None:
        super().__init__(chunks, book, now)
        self.tail = b""  # the log's last bytes read (ENDING), for what its last lines say (ended)
        self.width: int | None = None  # the terminal width its lines were wrapped at (tooling.logs.wrapped)

    def run(self) -> LogStats:
        chunks, unfinished = self.chunks, False
        while usable := chunks.fill():
            self.timeline.sample(self.line, usable)
            self.width = self.numeric.width = self.width or wrapped.width(chunks.buffer, usable)
            self.numeric.read(chunks, usable)
            done = self._chunk(usable)
            self._numbers(done)
            self.chunk_done(done)
            self.line = self.numeric.line_at(chunks, done, self.line)  # (its line breaks counted once)
            unfinished = done > 0 and chunks.buffer[done - 1] != ord("\n")  # (0: a block waits for the next poll)
            self.timeline.chunk_done(done, self.line)
            chunks.consume(done)
        return LogStats(chunks.name, self.line - 1 + unfinished, self.hits)

    def follow(self, before: Scanner) -> None:
        """Read on from ``before``, the scanner of the file the log was in before it was rotated."""
        self.timeline.follow(before.timeline, before.line, self.line)
        self.base = before.base + before.line - self.line
        # what is kept by line number goes on too (how far up a line is): a launcher's exit in this
        # file is of the episode a rank's death opened in that one, and the unwinding of a stop told
        # there is no failure here, as for lines of one file
        shift = self.line - before.line
        self.episodes, self.stopped = before.episodes.follow(shift), before.stopped + shift
        self.numeric = before.numeric.follow()
        # the lines above this file's first are that file's last, unless it reads on inside this one
        self.chunks.earlier = self.chunks.earlier if self.chunks.offset else before.chunks.earlier
        self.width = self.numeric.width = before.width

    def chunk_done(self, done: int) -> None:
        """The buffer's first ``done`` bytes are read (:attr:`line` is still that of the first)."""
        self.tail = (self.tail + bytes(self.chunks.buffer[max(0, done - ENDING):done]))[-ENDING:]

    def _chunk(self, usable: int) -> int:
        """Handle the flagged lines of the buffer's first ``usable`` bytes; return how many bytes
        are done (fewer when a traceback runs past the end: it is read again with the next chunk)."""
        buffer = self.chunks.buffer
        starts = self._whole_lines({line_start(buffer, end) for end in matcher().ends(buffer, usable) if end}, usable)
        skip: set[int] = set()  # lines inside a traceback or a summary: read with it, not alone
        for start in starts:
            self.deferrable = start > 0 and not self.chunks.eof
            self._numbers(start)
            line = self.numeric.line_at(self.chunks, start, self.line)  # (each line break counted once)
            if start not in skip and self._line(start, line, usable, skip):
                return start  # (the lines above it stay readable: Chunks.earlier)
        return usable

    def _whole_lines(self, starts: set[int], usable: int) -> list[int]:
        """The flagged lines (``starts``) with a wrapped line's parts as one (tooling.logs.wrapped): one
        flagged whole, read whole (:attr:`joined`) at its first part's start, its continuations not
        alone. Only a log that shows it was wrapped has its lines of the width looked at."""
        self.joined, buffer = {}, self.chunks.buffer
        found = wrapped.chains(buffer, usable, self.width) if self.width else []
        if not found:
            return sorted(starts)
        texts = [wrapped.whole(buffer, start, parts) for start, parts in found]
        offsets = list(accumulate((len(text) + 1 for text in texts[:-1]), initial=0))  # of each in the blob
        blob, inside = b"\n".join(texts), set()
        for index in sorted({bisect_right(offsets, end - 1) - 1 for end in matcher().ends(blob, len(blob)) if end}):
            start, parts = found[index]
            if (own := wrapped.verified(buffer, start, parts)) != parts:  # the rest is read alone, or is its own
                text = wrapped.whole(buffer, start, own) if own else b""
                if not own or not matcher().matching(text.decode("utf-8", "replace")):
                    continue
                parts, texts[index] = own, text
            inside.update(parts)
            self.joined[start] = texts[index].decode("utf-8", "replace")
        for start in inside:  # a middle part is read with its line's first
            self.joined.pop(start, None)
        return sorted((starts | self.joined.keys()) - inside)

    def _numbers(self, start: int) -> None:
        """Feed the series the queued progress lines before ``start`` of the buffer, in log order."""
        self._found(self.numeric.before(self.chunks, start, self.line, self.now, self.timeline.zoned))

    def ended(self) -> None:
        """The log ended (tooling scan; a watched one goes on): what its numbers show only then,
        a run killed from outside with nothing written about it but a bare notice, and a last
        line at error severity by its log prefix alone."""
        self._found(self.numeric.finish())
        lines = self.tail.decode("utf-8", "replace").split("\n")
        last = len(lines) - 1 - next((n for n, text in enumerate(reversed(lines)) if text.strip()), 0)
        if matcher().matching(lines[last]):
            return  # a line the recognisers read: drafted, or not, by them
        why = "a bare notice ends the log after its progress" \
            if unknown.killed_unsaid(lines[-1 - unknown.AFTER_PROGRESS * 4:]) \
            else "a line at error severity ends the log" if unknown.ends_on_error(lines[last]) else None
        if why is not None:
            number = self.line - (len(lines) - 1 - last)  # (self.line: the number of the line after the last break)
            text = clean(lines[last])
            self._add(number, text, text, Recognition(catalogue().get(UNCLASSIFIED), None, why, text),
                      (None, None), [], [])
