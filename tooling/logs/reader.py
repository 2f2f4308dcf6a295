"""Reading one flagged line of a log, and the block it opens, into hits.

:class:`LineReader` is the middle layer of the scan's :class:`~tooling.logs.scan.Scanner`: given
a line the automaton flagged (:mod:`tooling.logs.flagged`) it tells what it is: a traceback's
header (read to its exception line, with the error lines its process printed above it, or cut by
the end of the log), a block of native stack frames (:mod:`tooling.logs.frames`), an NCCL INFO
line that quotes the error NCCL returned, a stop told from outside, a line only
``other.unclassified``'s shapes name (a failure if the run died or ended there:
:mod:`tooling.logs.unknown`), or a line a mode names. What each becomes is
:class:`~tooling.logs.recorder.Recorder`'s; which lines are flagged, chunk by chunk, is
:mod:`tooling.logs.scan`'s.
"""
from __future__ import annotations

from datetime import datetime

from tooling.catalogue.statuses import nccl_returned
from tooling.catalogue.modes import catalogue
from tooling.catalogue.recognise import Recognition
from tooling.logs import blocks, frames, transient, unknown
from tooling.logs.chunks import Chunks
from tooling.logs.context import context
from tooling.logs.draft_book import DraftBook
from tooling.logs.flagged import (Flagged, clean, matcher, placed, raised_in, recognise_line, stop_recognition,
                                  told_from_outside)
from tooling.logs.recorder import Recorder
from tooling.logs.sampling import Numeric, non_finite_value
from tooling.logs.timeline import Moment
from tooling.logs.unknown import TAIL, UNCLASSIFIED, Fate

NAN = "training.nan"
BUG = "software.bug"  # an exception that says only that it is one ("ValueError: ...")
INFO = "NCCL INFO "  # e.g. "NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file"


class LineReader(Recorder):
    """Reads the flagged lines of one log (``chunks``) into ``book``."""

    def __init__(self, chunks: Chunks, book: DraftBook, now: datetime) -> None:
        super().__init__(chunks, book, now)
        self.stopped = -TAIL - 1  # line of the latest that says the process was told to stop
        self.judged = -1  # last line of the latest block of frames found to be no failure of its own
        self.numeric = Numeric()  # the series of its progress lines' numbers (tooling.logs.sampling)
        self.joined: dict[int, str] = {}  # a wrapped line's text read whole, by its first part's start (this chunk's)

    @property
    def _polled(self) -> bool:
        """A followed file not quiet yet: a line at the buffer's start waits for the next poll."""
        return self.chunks.polled and not self.chunks.eof

    def _line(self, start: int, line: int, limit: int, skip: set[int]) -> bool:
        """Read one flagged line (and the block it opens); True: the block is cut by the end of
        the buffer and the line must wait for the next chunk."""
        buffer = self.chunks.buffer
        text = clean(self.joined.get(start) or blocks.decode(buffer, start, limit)[0])
        where = context(text, self.now)
        when, time_from = self.timeline.of(where.when, start, line)
        if unknown.is_stop(text):
            self.stopped = line
        if frames.is_frame(text):
            read = self._frames(Flagged(text, where, start, line), limit, (when, time_from), skip)
            if read is not None:
                return read
        if blocks.is_traceback(text):
            above = self._preamble(start, line, blocks.line_prefix(text))
            found = blocks.exception_line(buffer, start, limit)
            if found is blocks.INCOMPLETE and not self.deferrable and self.chunks.ended \
                    and line - self.stopped > TAIL:
                if any(unknown.a_threads(told) for _, told in blocks.above(buffer, start, 1, self.chunks.earlier)):
                    return False  # a thread's traceback cut off: the thread died, not (yet) the run
                return self._cut(Flagged(text, where, start, line), limit, (when, time_from), above)
            if not isinstance(found, blocks.Found):  # else given up: no exception line
                return found is blocks.INCOMPLETE and (self.deferrable or self._polled)
            skip.update(found.body, (found.start,))
            since = time_from if time_from is not None else line
            frame = blocks.innermost_frame(buffer, found, limit)
            return self._exception(found.start, line + found.lines, limit, skip, (when, since if when else None), above,
                                   frame)
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
                return self._hit(Flagged(text, where, start, line), stop_recognition(text), (when, time_from), limit,
                                 skip)
        if recognition.mode is not None and recognition.mode.id == NAN \
                and transient.recovered(buffer, start, limit, text):
            return False  # a step the loss scaler skipped: the next reading is finite again
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
        for begin, raw in blocks.above(self.chunks.buffer, header, unknown.PREAMBLE, self.chunks.earlier):
            text = clean(raw)
            if blocks.line_prefix(text) != prefix or not unknown.says_error(text[len(prefix):]) \
                    or matcher().matching(raw):  # a flagged line is read by itself
                break
            found.append(Flagged(text, context(text, self.now), begin, line - len(found) - 1))
        return found[::-1]

    def _exception(self, start: int, line: int, limit: int, skip: set[int], header_time: Moment,
                   above: list[Flagged], frame: str = "") -> bool:
        """A traceback's last line is its signature: the exception, whatever its mode."""
        text = clean(blocks.decode(self.chunks.buffer, start, limit)[0])
        where = context(text, self.now)
        if unknown.went_on(text[where.message:]):  # not an exception: the paste lost it, and the run went on
            return False
        if unknown.by_hand(text[where.message:]):  # a Ctrl-C: what it unwinds through is the stop's, not a bug
            self.stopped = line
            return False
        recognition = recognise_line(text[:where.time[0]] + text[where.time[1]:])
        if told_from_outside(text[where.message:], recognition):  # torchrun's SignalException: the stop
            recognition = stop_recognition(text)
        elif recognition.mode is None or recognition.mode.id in (UNCLASSIFIED, BUG):  # an exception nothing names
            recognition = raised_in(frame, recognition.codes)  # but a Python one: the work its frame did, else a bug
        when = (where.when, None) if where.when and where.when.at else header_time
        for told in above:
            self._told(told, recognition, when)
        return recognition.mode is not None and self._hit(Flagged(text, where, start, line), recognition, when,
                                                          limit, skip)

    def _frames(self, at: Flagged, limit: int, when: Moment, skip: set[int]) -> bool | None:
        """A block of native stack frames that opens at ``at`` (tooling.logs.frames): drafted where
        no line near it names its failure and the run did not go on after it (False); True: it runs
        past the buffer and waits for the next chunk; None: no failure of its own, the line is read
        as any other (a recogniser may name it)."""
        if at.line <= self.judged:
            return None  # a frame of a block judged at its first line, not a block of its own
        buffer, deferrable = self.chunks.buffer, self.deferrable or self._polled
        found = frames.block(buffer, at.start, limit)
        if not found.complete and deferrable:
            return True
        if len(found.starts) < frames.MIN_FRAMES or at.line - self.stopped <= TAIL:
            return None  # a stray frame; the unwinding of a stop it was told
        # judged once for all its frames: read again from each (a deep recursion prints thousands),
        # a block cost each of its lines MAX_FRAMES lines above and below it (20,000 frames: 18 s)
        # the stack of the message above it, drafted (or not) by itself; or what a line below names
        # is its failure ("Segmentation fault (core dumped)")
        told = any(frames.is_warning(text) or recognise_line(clean(text)).mode is not None
                   for text in frames.above(buffer, at.start, self.chunks.earlier)) or \
            any((named := recognise_line(clean(text)).mode) is not None and named.id != UNCLASSIFIED
                for text in frames.below(buffer, found.starts[-1], limit, TAIL))
        fate = Fate.WENT_ON if told else \
            unknown.fate(buffer, found.starts[-1], limit, ended=self.chunks.ended, deferrable=deferrable)
        if fate is Fate.WAIT:
            return True
        if fate not in (Fate.ENDED, Fate.KILLED):
            self.judged = at.line + len(found.starts) - 1
            return None
        skip.update(found.starts)
        recognition = Recognition(catalogue().get(UNCLASSIFIED), None, "a block of native stack frames", at.text)
        for index, raw in enumerate(found.texts):
            text = clean(raw)
            where = context(text, self.now)
            self._add(at.line + index, text, text[where.message:], recognition, when, *placed(where),
                      evidence=(frames.evidence(found),) if index == len(found.texts) - 1 else ())
        return False

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

    def _cut(self, header: Flagged, limit: int, when: Moment, above: list[Flagged]) -> bool:
        """A log that ends inside a traceback: its header and its last line are the failure (a
        bare header that ends the log is both, and one line: it is added once)."""
        last, below = unknown.last_line(self.chunks.buffer, header.start, limit)
        text = clean(blocks.decode(self.chunks.buffer, last, limit)[0])
        where = context(text, self.now)
        recognition = Recognition(catalogue().get(UNCLASSIFIED), None, "a traceback the log cuts off", text)
        key = self.episodes.key_of(header.line + below, text[where.message:])  # its last line tells it apart
        for told in above:
            self._told(told, recognition, when, cut=True, key=key)
        lines = [(header.line, header.text, header.where)] + ([(header.line + below, text, where)] if below else [])
        for line, shown, at in lines:
            self._add(line, shown, shown[at.message:], recognition, when, *placed(at), cut=True, key=key)
        return False
