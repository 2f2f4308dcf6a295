"""Finding failures in raw logs (dmesg, NCCL, SLURM job output, tracebacks), gigabytes at a time.

Each log is read in chunks (:mod:`tooling.logs.chunks`) and each chunk goes whole through one
automaton of every recogniser of the catalogue (:func:`tooling.logs.flagged.matcher`); only
the lines it flags are decoded and looked at in Python, where the catalogue's recogniser
(:mod:`tooling.catalogue.recognise`) names their failure mode and :mod:`tooling.logs.context`
their time, host and rank. Python tracebacks and
torchrun's failure summary span lines: :mod:`tooling.logs.blocks` reads them. Hits become
drafts (:mod:`tooling.logs.drafts`); nothing kept grows with the size of the log.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Sequence

from tooling.catalogue.codes import nccl_returned
from tooling.catalogue.modes import catalogue
from tooling.catalogue.recognise import Recognition
from tooling.logs import blocks, unknown
from tooling.logs.chunks import CHUNK, Chunks, log_name, open_log
from tooling.logs.context import When, context
from tooling.logs.drafts import Draft, DraftBook, Hit
from tooling.logs.flagged import (Flagged, clean, line_start, matcher, placed, recognise_line, stop_recognition,
                                  told_from_outside)
from tooling.logs.sampling import Numeric, non_finite_value, recognition as found_as
from tooling.logs.spikes import HANG, SeriesFinding
from tooling.logs.timeline import Timeline
from tooling.logs.unknown import TAIL, UNCLASSIFIED, Episodes, Fate

ENDING = 4096  # bytes of a log's end kept to read its last lines (tooling.logs.unknown.killed_unsaid)
INFO = "NCCL INFO "  # e.g. "NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file"


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
    dropped: int  # lines of failures beyond drafts.MAX_DRAFTS


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


class Scanner:
    """Reads one log from ``chunks`` into ``book``: :meth:`run` until ``chunks`` has no more.

    tooling watch runs one per followed file again at every poll, with chunks that end where the
    file ends for now (:class:`tooling.watch.tail.Tail`): :attr:`line` and the :attr:`timeline`
    carry over (from one file of a rotated log to the next too: :meth:`follow`), and
    :meth:`chunk_done` is where it looks for progress lines.
    """

    def __init__(self, chunks: Chunks, book: DraftBook, now: datetime) -> None:
        self.chunks, self.book = chunks, book
        self.timeline = Timeline(chunks, now)
        self.line = 1  # number of the line at the start of the buffer
        self.base = 0  # lines of the log before this file (files of a rotated log read one after the other)
        self.hits = 0
        self.deferrable = False  # whether the line at hand may wait for the next chunk
        self.episodes = Episodes()  # of the failures no mode names
        self.stopped = -TAIL - 1  # line of the latest that says the process was told to stop
        self.numeric = Numeric()  # the series of its progress lines' numbers (tooling.logs.sampling)
        self.failed = 0  # the line of the latest failure a line named
        self.held: int | None = None  # where a traceback that waits for the next chunk starts, lines above it included
        self.tail = b""  # the log's last bytes read (ENDING), for what its last lines say (ended)

    @property
    def now(self) -> datetime:
        return self.timeline.now

    @now.setter
    def now(self, value: datetime) -> None:
        self.timeline.now = value

    def run(self) -> LogStats:
        chunks, unfinished = self.chunks, False
        while usable := chunks.fill():
            self.timeline.sample(self.line, usable)
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
        self.numeric = before.numeric.follow()

    def chunk_done(self, done: int) -> None:
        """The buffer's first ``done`` bytes are read (:attr:`line` is still that of the first)."""
        self.tail = (self.tail + bytes(self.chunks.buffer[max(0, done - ENDING):done]))[-ENDING:]

    def _chunk(self, usable: int) -> int:
        """Handle the flagged lines of the buffer's first ``usable`` bytes; return how many bytes
        are done (fewer when a traceback runs past the end: it is read again with the next chunk)."""
        buffer = self.chunks.buffer
        starts = sorted({line_start(buffer, end) for end in matcher().ends(buffer, usable) if end})
        skip: set[int] = set()  # lines inside a traceback or a summary: read with it, not alone
        for start in starts:
            self.deferrable = start > 0 and not self.chunks.eof
            self._numbers(start)
            line = self.numeric.line_at(self.chunks, start, self.line)  # (each line break counted once)
            if start not in skip and self._line(start, line, usable, skip):
                held, self.held = self.held, None
                return held or start
        return usable

    def _line(self, start: int, line: int, limit: int, skip: set[int]) -> bool:
        """Read one flagged line (and the block it opens); True: the block is cut by the end of
        the buffer and the line must wait for the next chunk."""
        buffer = self.chunks.buffer
        text = clean(blocks.decode(buffer, start, limit)[0])
        where = context(text, self.now)
        when, time_from = self.timeline.of(where.when, start, line)
        if unknown.is_stop(text):
            self.stopped = line
        if blocks.is_traceback(text):
            above = self._preamble(start, line, blocks.line_prefix(text))
            found = blocks.exception_line(buffer, start, limit)
            if found is blocks.INCOMPLETE and not self.deferrable and self.chunks.ended \
                    and line - self.stopped > TAIL:
                return self._cut(Flagged(text, where, start, line), limit, (when, time_from), above)
            if not isinstance(found, blocks.Found):  # else given up: no exception line
                waits = found is blocks.INCOMPLETE and (self.deferrable or self._polled)
                self.held = above[0].start if waits and above else None  # (0: the buffer's start, never held)
                return waits
            skip.update(found.body, (found.start,))
            since = time_from if time_from is not None else line
            return self._exception(found.start, line + found.lines, limit, skip, (when, since if when else None), above)
        echo = False
        if text.startswith(INFO, where.message):
            # NCCL reports failures as WARN; its INFO lines quote library errors it got past, but
            # for the trace of the error it returned, which may be all a log (or a paste) kept
            returned = nccl_returned(text[where.message:])
            if returned is None:
                return False
            recognition, echo = recognise_line(f"NCCL returned {returned}"), True
        else:
            recognition = recognise_line(text[:where.time[0]] + text[where.time[1]:])
            recognition = recognition if recognition.mode is not None else non_finite_value(text) or recognition
            self._found(self.numeric.scale_changed(line, text, when))
            if told_from_outside(text[where.message:], recognition):  # a failure, unless a line near it says why
                return self._hit(Flagged(text, where, start, line), stop_recognition(text), (when, time_from), limit, skip)
        if recognition.mode is not None and recognition.mode.id == UNCLASSIFIED:
            fate = self._fate(Flagged(text, where, start, line), limit)
            if fate not in (Fate.ENDED, Fate.KILLED):
                return fate is Fate.WAIT
        return recognition.mode is not None and self._hit(
            Flagged(text, where, start, line), recognition, (when, time_from), limit, skip, echo=echo)

    def _preamble(self, header: int, line: int, prefix: str) -> list[Flagged]:
        """The error lines its process printed just above a traceback's header (line ``line``), of
        its rank, that no recogniser flags (THC's "THCudaCheck FAIL ... error=2 : out of memory"):
        the traceback's failure told before it, taken into its draft. Up to the first line that
        says no error (unknown.says_error), nearest last."""
        found: list[Flagged] = []
        for begin, raw in blocks.above(self.chunks.buffer, header, unknown.PREAMBLE):
            text = clean(raw)
            if blocks.line_prefix(text) != prefix or not unknown.says_error(text[len(prefix):]) \
                    or matcher().matching(raw):  # a flagged line is read by itself
                break
            found.append(Flagged(text, context(text, self.now), begin, line - len(found) - 1))
        return found[::-1]

    def _exception(self, start: int, line: int, limit: int, skip: set[int],
                   header_time: tuple[When | None, int | None], above: list[Flagged]) -> bool:
        """A traceback's last line is its signature: the exception, whatever its mode."""
        text = clean(blocks.decode(self.chunks.buffer, start, limit)[0])
        where = context(text, self.now)
        if unknown.went_on(text[where.message:]):  # not an exception: the paste lost it, and the run went on
            return False
        recognition = recognise_line(text[:where.time[0]] + text[where.time[1]:])
        if told_from_outside(text[where.message:], recognition):  # torchrun's SignalException: the stop
            recognition = stop_recognition(text)
        elif recognition.mode is None or recognition.mode.id == UNCLASSIFIED:  # an exception nothing names: a bug
            recognition = Recognition(catalogue().get("software.bug"), recognition.codes, "a traceback")
        when = (where.when, None) if where.when and where.when.at else header_time
        for told in above:
            self._told(told, recognition, when)
        return recognition.mode is not None and self._hit(Flagged(text, where, start, line), recognition, when,
                                                          limit, skip)

    def _told(self, at: Flagged, recognition: Recognition, when: tuple[When | None, int | None], *,
              cut: bool = False, key: str = "") -> None:
        """A line of a traceback's preamble, a line of its failure (see _preamble), at its own time
        if it has one."""
        when = (at.where.when, None) if at.where.when and at.where.when.at else when
        self._add(at.line, at.text, at.text[at.where.message:], recognition, when, *placed(at.where),
                  cut=cut, key=key)

    def _hit(self, at: Flagged, recognition: Recognition, when: tuple[When | None, int | None], limit: int,
             skip: set[int], *, echo: bool = False) -> bool:
        nodes, ranks = placed(at.where)
        summary = None
        if "ChildFailedError" in at.text:
            end = self.chunks.buffer.find(b"\n", at.start, limit)  # (none: the summary is past the buffer)
            summary = blocks.torchrun_summary(self.chunks.buffer, end + 1 if end >= 0 else limit, limit, self.now)
            if not summary.complete and self.deferrable:
                return True  # read again, whole, with the next chunk
            skip.update(summary.body)
            nodes, ranks = nodes + summary.hosts, ranks + summary.ranks
            when = (summary.when, None) if when[0] is None and summary.when else when
        self._add(at.line, at.text, at.text[at.where.message:], recognition, when, nodes, ranks, echo=echo)
        if summary is not None:
            self._ranks_died(summary, at.line, when)
        return False

    def _ranks_died(self, summary: blocks.Summary, line: int, when: tuple[When | None, int | None]) -> None:
        """torchrun's summary: where each failed rank ran, and how it died ("exitcode  : -9": killed,
        most often for memory), a failure of its own when a mode owns that exit status."""
        for entry in summary.entries:
            if entry.hosts and entry.ranks:
                self.book.locate(self.chunks.name, entry.ranks[0], entry.hosts[0], entry.when.at if entry.when else None)
            died = recognise_line(entry.text)
            if died.mode is not None and entry.text:
                self._add(line + entry.lines, clean(entry.text), entry.text.strip(), died,
                          (entry.when, None) if entry.when else when, list(entry.hosts), list(entry.ranks))

    def _add(self, line: int, text: str, message: str, recognition: Recognition,
             when: tuple[When | None, int | None], nodes: list[str], ranks: list[int], *, echo: bool = False,
             cut: bool = False, key: str = "", evidence: tuple[str, ...] = ()) -> None:
        if not evidence:  # a line that names a failure (a finding of the numbers names none)
            self.hits, self.failed = self.hits + 1, line
        at = self.timeline.zoned(when[0], line) if when[0] else None
        if recognition.mode is not None and recognition.mode.id == UNCLASSIFIED:
            key = key or self.episodes.key_of(line, message)
        self.book.add(Hit(self.chunks.name, line, text, message, recognition, at, when[1],
                          tuple(dict.fromkeys(nodes)), tuple(dict.fromkeys(ranks)), echo, self.base + line, key, cut,
                          evidence))

    def _fate(self, at: Flagged, limit: int) -> Fate:
        """What became of the run after a line that only ``other.unclassified``'s shapes name: a
        failure where it died or ended there (tooling.logs.unknown)."""
        message = at.text[at.where.message:]
        if at.line - self.stopped <= TAIL:
            return Fate.WENT_ON  # the unwinding of a stop it was told
        if unknown.dies(message):
            return Fate.KILLED
        return Fate.WENT_ON if unknown.retries(message) else unknown.fate(
            self.chunks.buffer, at.start, limit, ended=self.chunks.ended,
            deferrable=self.deferrable or self._polled)

    @property
    def _polled(self) -> bool:
        """A followed file not quiet yet: a line at the buffer's start waits for the next poll."""
        return self.chunks.polled and not self.chunks.eof

    def _cut(self, header: Flagged, limit: int, when: tuple[When | None, int | None], above: list[Flagged]) -> bool:
        """A log that ends inside a traceback: its header and its last line are the failure."""
        last, below = unknown.last_line(self.chunks.buffer, header.start, limit)
        text = clean(blocks.decode(self.chunks.buffer, last, limit)[0])
        where = context(text, self.now)
        recognition = Recognition(catalogue().get(UNCLASSIFIED), None, "a traceback the log cuts off", text)
        key = self.episodes.key_of(header.line + below, text[where.message:])  # its last line tells it apart
        for told in above:
            self._told(told, recognition, when, cut=True, key=key)
        for line, shown, at in ((header.line, header.text, header.where), (header.line + below, text, where)):
            self._add(line, shown, shown[at.message:], recognition, when, *placed(at), cut=True, key=key)
        return False

    def ended(self) -> None:
        """The log ended (tooling scan; a watched one goes on): what its numbers show only then,
        and a run killed from outside with nothing written about it but a bare notice."""
        self._found(self.numeric.finish())
        lines = self.tail.decode("utf-8", "replace").split("\n")
        last = len(lines) - 1 - next((n for n, text in enumerate(reversed(lines)) if text.strip()), 0)
        if unknown.killed_unsaid(lines[-1 - unknown.AFTER_PROGRESS * 4:]) and not matcher().matching(lines[last]):
            number = self.line - (len(lines) - 1 - last)  # (self.line: the number of the line after the last break)
            text = clean(lines[last])
            self._add(number, text, text, Recognition(catalogue().get(UNCLASSIFIED), None,
                                                      "a bare notice ends the log after its progress", text),
                      (None, None), [], [])

    def _numbers(self, start: int) -> None:
        """Feed the series the queued progress lines before ``start`` of the buffer, in log order."""
        self._found(self.numeric.before(self.chunks, start, self.line, self.now, self.timeline.zoned))

    def _found(self, findings: list[SeriesFinding]) -> None:
        """What only the numbers show, drafted as any failure, its numbers as evidence."""
        for found in findings:
            if found.mode == HANG and self.failed > found.at.line:
                continue  # a failure in the gap: the run died and came back, no stall of its own
            at, text = found.at, clean(found.at.text)  # (cleaned only now: most samples never show)
            self._add(at.line, text, text[context(text, self.now).message:], found_as(found), (at.when, None), [], [],
                      evidence=tuple(clean(line) for line in found.evidence))
