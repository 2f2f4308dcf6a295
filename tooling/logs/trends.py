"""The slower trends of a log's numbers (for :class:`tooling.logs.series.Series`): a throughput drop or
slow steps, a loss that stopped moving, a stall seen as a gap in the timestamps (a loss scale halved
down to its floor: :mod:`tooling.logs.scale`). Each is measured against the run's own numbers, never a fixed speed or loss.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
import statistics
from datetime import timedelta

from tooling.logs.context import When
from tooling.logs.numbers import Reading, significant_digits
from tooling.logs.spikes import HANG, MIN_HISTORY, WINDOW, SeriesFinding, Point, g, quoted, steps_between
from tooling.records.runs import STALL_AFTER_MINUTES, stalled
from tooling.resilience.baseline import RobustBaseline

DROP = 0.7  # slower than this fraction of its median speed: a drop
BACK = 0.85  # as fast as this fraction again: the drop is over
PERSIST = 5  # progress lines in a row below DROP: a drop, not one checkpoint save's or evaluation's pause
SPEED_WARMUP = 10  # progress lines not timed at a log's start (compiling, warming caches)
FLAT_LINES, FLAT_STEPS = 100, 1000  # a loss unchanged to its last printed digit over so many progress lines
# (and steps, where known): a smoothed loss that still falls moves its last digit well within that
FLAT_DIGITS = 4  # "loss 2.31" unchanged says little: its noise may hide below the digits shown
# a log too short for the rule's baseline (SPEED_WARMUP + MIN_HISTORY progress lines): a fall at its
# end, below DROP of the median of at least END_BEFORE readings before it, on its last END_LINES
# lines or more, each no faster than the one before and two speeds at least (a line printed twice
# is one reading): a run that slows as the paste ends, not one pause that the next line is over
END_BEFORE, END_LINES = 5, 3
GAP_RATIO = 10.0  # a gap this many times the usual interval between progress lines, and a stall by the stall rule
MIN_INTERVALS = 5  # intervals seen before a gap is judged
GAP_WINDOW = 50


@dataclass
class _Drop:
    start: Point
    worst: Point
    worst_value: float
    median: float
    lines: int = 1


class Slowdown:
    """Throughput (tokens/s, samples/s, TFLOP/s, MFU) or, where a line gives none, step time, against
    its own median: below DROP for PERSIST progress lines in a row is a training.throughput-drop; in a
    log too short for that median, a fall that lasts to the log's end (:meth:`finish`)."""

    def __init__(self) -> None:
        self.baseline = RobustBaseline(WINDOW)
        self.seen = 0
        self.kind: str | None = None  # "speed" or "time": the first a log gives, then only that one
        self.reading: Reading | None = None
        self.open: _Drop | None = None
        self.early: list[tuple[Point, float]] = []  # the readings before the baseline could judge

    def observe(self, point: Point, speed: Reading | None, time: Reading | None) -> SeriesFinding | None:
        kind = self.kind or ("speed" if speed is not None else "time")
        reading = speed if kind == "speed" else time
        if reading is None or not math.isfinite(reading.value) or reading.value <= 0:
            return None
        self.kind, self.reading = kind, reading
        value = reading.value if kind == "speed" else 1 / reading.value  # higher is faster, either way
        self.seen += 1
        if self.seen <= SPEED_WARMUP + MIN_HISTORY:
            self.early.append((point, value))
        if self.seen <= SPEED_WARMUP:
            return None
        drop = self.open
        if drop is None:
            if len(self.baseline) >= MIN_HISTORY and value < DROP * (median := self.baseline.median()):
                self.open = _Drop(point, point, value, median)
                return None
            self.baseline.add(value)
            return None
        if value >= BACK * drop.median:
            self.open = None
            self.baseline.add(value)
            return None
        drop.lines += 1
        if value < drop.worst_value:
            drop.worst, drop.worst_value = point, value
        return self._finding(drop, point, value) if drop.lines == PERSIST else None

    def finish(self) -> SeriesFinding | None:
        """The log ends: in a log too short for the baseline, a fall that lasted to its end."""
        early = self.early
        if self.seen > SPEED_WARMUP + MIN_HISTORY or len(early) < END_BEFORE + END_LINES:
            return None
        tail = _falling_tail([value for _, value in early])
        fall = early[len(early) - tail:]
        if tail < END_LINES or len({v for _, v in fall}) < 2:
            return None
        usual = statistics.median(v for _, v in early[:-tail])
        (start, _), (end, value) = fall[0], fall[-1]
        moved = "fell" if self.kind == "speed" else "rose"
        ratio = value / usual if self.kind == "speed" else usual / value
        text = (f"{self.reading.key if self.reading else 'speed'} {moved} to {self._show(value)} at {end.place()}, "
                f"{ratio:.2f}x the median {self._show(usual)} of the {len(early) - tail} progress lines before, "
                f"past {DROP}x on the log's last {tail} progress lines from {start.place()}, none faster than "
                f"the one before, to the log's end")
        return SeriesFinding("training.throughput-drop", f"{self._show(usual)} to {self._show(value)} at the end",
                             start, (text, *quoted(("start", start), ("latest", end))))

    def _show(self, value: float) -> str:
        """A speed as the log writes it: the throughput, or the step time in the log's unit."""
        reading = self.reading
        assert reading is not None
        if self.kind == "speed":
            return f"{g(value)}{reading.unit}"
        milli = reading.unit.lower() == "ms" or "(ms)" in reading.key.lower()
        return f"{g((1000 if milli else 1) / value)}{reading.unit}"

    def _finding(self, drop: _Drop, end: Point, value: float) -> SeriesFinding:
        reading = self.reading
        assert reading is not None
        speed = self.kind == "speed"
        ratio = (lambda v: v / drop.median) if speed else (lambda v: drop.median / v)
        moved, limit = ("fell", f"below {DROP}x") if speed else ("rose", f"above {1 / DROP:.2f}x")
        text = (f"{reading.key} {moved} to {self._show(value)} at "
                f"{end.place()}, {ratio(value):.2f}x its median {self._show(drop.median)} over the "
                f"{len(self.baseline)} progress lines before, and stayed {limit} for {PERSIST} progress lines in a "
                f"row from {drop.start.place()}; {'lowest' if speed else 'slowest'} {self._show(drop.worst_value)} at "
                f"{drop.worst.place()} ({ratio(drop.worst_value):.2f}x)")
        lines = quoted(("start", drop.start), ("worst", drop.worst), ("latest", end))
        return SeriesFinding("training.throughput-drop", f"{reading.key} {ratio(drop.worst_value):.2f}x its median",
                       drop.start, (text, *lines))


def _falling_tail(values: list[float]) -> int:
    """How many of the last values are each no higher than the one before and all below DROP of the
    median of the values before them (END_BEFORE of those at least)."""
    tail = 0
    while tail + 1 <= len(values) - END_BEFORE:
        value, after = values[-tail - 1], values[-tail] if tail else None
        if (after is not None and value < after) or value >= DROP * statistics.median(values[:-tail - 1]):
            break
        tail += 1
    return tail


class Flat:
    """A loss that does not move at all (printed the same, to FLAT_DIGITS or more digits) over
    FLAT_LINES progress lines and FLAT_STEPS steps: a training.plateau, the model no longer learning.
    A loss that still has its batch-to-batch noise is not judged: flat but noisy is what a healthy
    run looks like late in training, and the numbers alone cannot tell the two apart."""

    def __init__(self) -> None:
        self.start: Point | None = None
        self.value = 0.0
        self.lines = 0
        self.fired = False

    def observe(self, point: Point, reading: Reading) -> SeriesFinding | None:
        value, start = reading.value, self.start
        # a loss of exactly zero is no plateau: it stopped counting (tooling.logs.zero), or starts at zero by design
        steady = (start is not None and value == self.value != 0 and significant_digits(reading.raw) >= FLAT_DIGITS
                  and (start.step is None or point.step is None or point.step > start.step))
        if not steady or start is None:
            self.start, self.value, self.lines, self.fired = point, value, 1, False
            return None
        self.lines += 1
        steps = point.step - start.step if point.step is not None and start.step is not None else None
        if self.fired or self.lines < FLAT_LINES or (steps is not None and steps < FLAT_STEPS):
            return None
        self.fired = True
        text = (f"{reading.key} stayed at {reading.raw}, to its last digit, over {self.lines} progress lines, "
                f"{steps_between(start, point)} from {start.place()} to {point.place()}: not even its noise moved")
        return SeriesFinding("training.plateau", f"{reading.key} {reading.raw} for {steps_between(start, point)}", start,
                       (text, *quoted(("first", start), ("latest", point))))


def _clock(when: When) -> tuple[object, ...]:
    """What two times must share to be subtracted: read alike (a zone given, assumed or taken from
    another line; a year given or assumed) and in one offset."""
    assert when.at is not None
    return when.zone_assumed, when.zone_from is None, when.year_assumed, when.at.utcoffset()


class Gap:
    """A stall seen afterwards: two progress lines GAP_RATIO times the usual interval apart, and
    apart for as long as the stall rule (:func:`tooling.records.runs.stalled`) calls a stall
    (training.hang). A step counter that went back across the gap is a restart, not a stall."""

    def __init__(self) -> None:
        self.before: Point | None = None
        self.clock: tuple[object, ...] | None = None  # of the line before
        self.intervals = RobustBaseline(GAP_WINDOW)

    def observe(self, point: Point) -> SeriesFinding | None:
        when, before = point.when, self.before
        if when is None or when.at is None:
            return None
        clock, last = _clock(when), self.clock
        self.before, self.clock = point, clock
        if before is None or before.when is None or before.when.at is None or last != clock:
            return None
        gap = when.at - before.when.at
        seconds = gap.total_seconds()
        if seconds <= 0:
            return None
        if len(self.intervals) >= MIN_INTERVALS:
            usual = self.intervals.median()
            restarted = point.step is not None and before.step is not None and point.step <= before.step
            if seconds >= GAP_RATIO * usual and stalled(gap, STALL_AFTER_MINUTES) and not restarted:
                return self._finding(before, point, gap, usual)
        self.intervals.add(seconds)
        return None

    def _finding(self, before: Point, after: Point, gap: timedelta, usual: float) -> SeriesFinding:
        minutes = gap.total_seconds() / 60
        text = (f"no progress line for {minutes:.0f} minutes between {before.place()} and {after.place()}; they "
                f"came every {g(usual)} s before (the median of the last {len(self.intervals)} intervals): "
                f"{gap.total_seconds() / usual:,.0f}x the usual interval, past the stall rule's "
                f"{STALL_AFTER_MINUTES} minutes")
        return SeriesFinding(HANG, f"no progress for {minutes:.0f} minutes", before,
                       (text, *quoted(("before", before), ("after", after))))
