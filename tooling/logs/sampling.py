"""Which progress lines a scan reads the numbers of, and the series they feed, in log order.

Only progress lines and lines that write a loss or a progress bar's rate are read
(:func:`sample_matcher`, one automaton, finds the next one), and not always all of them: a
progress line costs microseconds in Python, and a gigabyte log written a progress line every
other line (tests/bench/bench_scan.py) would cost the scan several times its budget. So the
:class:`Sampler` spends tokens: up to :data:`CAPACITY` lines at once, one more for every
:data:`RATE` bytes of log. A log of a few thousand progress lines has every one read; a denser
one is sampled evenly (the first progress line after each RATE bytes), and a spike, drop or
plateau shorter than the distance between two samples is missed (a stall is not: the samples
around a gap in the timestamps span it). Tokens are counted in bytes of the log, so a log read in polls
(tooling watch) has the very lines sampled that it has read whole.

:class:`Numeric` feeds the samples to the log's :class:`~tooling.logs.series.Series` in log
order, between the failure lines the scan reads (so that a finding meets the others in the order
a log read whole gives, whatever the polls), and with them the lines that change the loss scale.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Callable

from tooling.catalogue.engine import Matcher
from tooling.catalogue.modes import catalogue
from tooling.catalogue.recognise import Recognition
from tooling.catalogue.signatures import PROGRESS, is_progress
from tooling.logs import blocks, wrapped
from tooling.logs.chunks import Chunks
from tooling.logs.context import When, line_time
from tooling.logs.numbers import WRITTEN, non_finite, numbers, scale_change
from tooling.logs.series import Series
from tooling.logs.spikes import SeriesFinding, Point

CAPACITY = 2000  # progress lines read at once before sampling starts
RATE = 1 << 20  # bytes of log per progress line read after that


@lru_cache(maxsize=1)
def progress_matcher() -> Matcher:
    """Finds the first progress line of a text (and stops there)."""
    return Matcher([PROGRESS], first_only=True)


@lru_cache(maxsize=1)
def sample_matcher() -> Matcher:
    """Finds the first line whose numbers are read: a progress line, or a line that writes a
    training loss or a progress bar's rate (:data:`tooling.logs.numbers.WRITTEN`)."""
    return Matcher([PROGRESS, *WRITTEN], first_only=True)


@dataclass(frozen=True)
class Sample:
    at: int  # offset of the line in its file
    text: str


class Sampler:
    """Tokens for progress lines, kept in bytes (``credit``): see the module's docstring."""

    def __init__(self) -> None:
        self.credit = CAPACITY * RATE

    def read(self, buffer: bytearray, begin: int, end: int, offset: int, columns: int | None = None) -> list[Sample]:
        """The progress lines to read among the whole lines of ``buffer[begin:end]`` (``offset``:
        of the buffer in its file), a line wrapped at ``columns`` read whole (tooling.logs.wrapped)."""
        samples, pos = [], begin
        with memoryview(buffer) as view:
            while pos < end:
                if self.credit < RATE:  # no token: pass over the bytes that earn the next one
                    step = min(RATE - self.credit, end - pos)
                    self.credit, pos = self.credit + step, pos + step
                    continue
                with view[pos:end] as part:
                    found = sample_matcher().first(part)  # type: ignore[arg-type]
                if found is None:
                    self._earn(end - pos)
                    break
                start = buffer.rfind(b"\n", begin, pos + found[1] - 1) + 1 or begin
                text, following = blocks.decode(buffer, start, end)
                following = end if following < 0 else following
                if columns and (parts := wrapped.rest(buffer, start, end, columns)):
                    text = wrapped.whole(buffer, start, parts).decode("utf-8", "replace")
                    following = buffer.find(b"\n", parts[-1], end) + 1 or end
                samples.append(Sample(offset + start, text))
                self._earn(following - pos)
                self.credit -= RATE
                pos = following
        return samples

    def _earn(self, count: int) -> None:
        self.credit = min(CAPACITY * RATE, self.credit + count)


class Numeric:
    """The samples of a log waiting for their turn, the sampler and the series (shared with the
    scanner of the file a rotated log was in before: :meth:`follow`)."""

    def __init__(self, sampler: Sampler | None = None, series: Series | None = None) -> None:
        self.sampler = sampler or Sampler()
        self.series = series or Series()
        self.waiting: deque[Sample] = deque()
        self.sampled = 0  # offset in its file up to which progress lines are sampled
        self.cursor: tuple[int, int] | None = None  # (offset in its file, number) of the last line numbered
        self.width: int | None = None  # the terminal width its lines were wrapped at (the scanner's to tell)

    def follow(self) -> Numeric:
        """The same log going on in another file."""
        return Numeric(self.sampler, self.series)

    def read(self, chunks: Chunks, usable: int) -> None:
        """Queue the progress lines to read among the buffer's first ``usable`` bytes not sampled yet."""
        begin = max(0, self.sampled - chunks.offset)  # (a chunk read again after a cut traceback)
        self.waiting.extend(self.sampler.read(chunks.buffer, begin, usable, chunks.offset, self.width))
        self.sampled = chunks.offset + usable

    def before(self, chunks: Chunks, start: int, line: int, now: datetime,
               zoned: Callable[[When, int], When]) -> list[SeriesFinding]:
        """What the samples before ``start`` of the buffer (whose first line is number ``line``)
        show: fed to the series, in order."""
        found: list[SeriesFinding] = []
        while self.waiting and self.waiting[0].at < chunks.offset + start:
            sample = self.waiting.popleft()
            text, number = sample.text, self.line_at(chunks, sample.at - chunks.offset, line)
            values = numbers(text)
            when = line_time(text, now)
            found += self.series.observe(Point(number, text, zoned(when, number) if when else None, values.step),
                                         values)
        return found

    def line_at(self, chunks: Chunks, start: int, line: int) -> int:
        """The number of the line at ``start`` of the buffer (whose first line is number ``line``),
        counted on from the last line numbered: the scanner asks for its chunk's end too, so that
        a buffer's line breaks are counted once, samples or not."""
        here, number = self.cursor if self.cursor and self.cursor[0] >= chunks.offset else (chunks.offset, line)
        number += chunks.buffer.count(b"\n", here - chunks.offset, start)
        self.cursor = (chunks.offset + start, number)
        return number

    def scale_changed(self, line: int, text: str, when: When | None) -> list[SeriesFinding]:
        """A line the scan read (flagged: :data:`tooling.logs.numbers.FLAGS`) that may reduce the loss scale."""
        change = scale_change(text)
        return self.series.scale_changed(Point(line, text, when), *change) if change else []

    def finish(self) -> list[SeriesFinding]:
        return self.series.finish()


def non_finite_value(text: str) -> Recognition | None:
    """A progress line whose number is NaN or Inf, though no words of it say so (``| gnorm nan |``):
    training.nan, by its value."""
    if not is_progress(text) or (reading := non_finite(text)) is None:
        return None
    return Recognition(catalogue().get("training.nan"), via=f"{reading.key} {reading.raw}")


def recognition(finding: SeriesFinding) -> Recognition:
    mode = catalogue().get(finding.mode)
    assert mode is not None, f"the catalogue has {finding.mode}"
    return Recognition(mode, via=finding.via)
