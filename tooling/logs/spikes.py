"""Spikes of the loss or the gradient norm, and what every finding of a log's numbers is made of.

A progress line (:class:`Point`) and a :class:`SeriesFinding` (its mode, the numbers in brief, where it
starts, its evidence). :class:`Spike` watches one quantity: a value far above the robust baseline
of the progress lines before it (a running median and MAD, the loss-spike guard's
:class:`~tooling.resilience.baseline.RobustBaseline`, which only healthy values join) starts a
spike; back within :data:`RECOVER_Z` deviations within :data:`PATIENCE_STEPS` it recovered
(training.loss-spike-recovered), else it diverged (training.divergence).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from tooling.logs.context import When
from tooling.logs.numbers import Reading
from tooling.resilience.baseline import RobustBaseline

WINDOW = 100  # values of a baseline (progress lines)
MIN_HISTORY = 20  # values in a baseline before anything is judged against it
WARMUP = 30  # progress lines not judged at a log's start: the loss falls fast, the first steps compile
MIN_DEVIATION = 0.01  # of the median: a loss flat to its last digit is no hair trigger (the guard's floor)
RECOVER_Z = 3.0  # back within so many deviations of the median: the spike is over
PATIENCE_STEPS = 500  # a spike not back within so many steps is a divergence
PATIENCE_LINES = 50  # or so many progress lines, where they give no step
MIN_OPEN = 3  # progress lines a spike must have lasted to be a divergence when the log ends in it
RECOVERED, DIVERGED = "training.loss-spike-recovered", "training.divergence"
HANG = "training.hang"


@dataclass(frozen=True)
class Point:
    """A progress line: its number in the log, its text, its time and its step, where it says them."""
    line: int
    text: str
    when: When | None = None
    step: int | None = None

    def place(self) -> str:
        return f"line {self.line}" + (f" (step {self.step})" if self.step is not None else "")


@dataclass(frozen=True)
class SeriesFinding:
    mode: str  # the catalogue's failure mode
    via: str  # the numbers in brief, for a title: "loss 2.31 to 7.9"
    at: Point  # where it started
    evidence: tuple[str, ...]  # the numbers in words, then the lines that show them


def quoted(*points: tuple[str, Point]) -> tuple[str, ...]:
    """The lines of a finding, each with what it is: ``start: line 120 (step 1200): step 1200 | loss 2.31``."""
    seen: set[int] = set()
    out = []
    for what, point in points:
        if point.line not in seen:
            seen.add(point.line)
            out.append(f"{what}: {point.place()}: {point.text}")
    return tuple(out)


def g(value: float) -> str:
    """A number as evidence shows it: four significant digits, thousands apart."""
    return f"{value:,.0f}" if abs(value) >= 10_000 else f"{value:.4g}"


def steps_between(first: Point, last: Point) -> str:
    if first.step is not None and last.step is not None:
        return f"{last.step - first.step} steps"
    return f"{last.line - first.line} lines"


@dataclass
class _Episode:
    start: Point
    peak: Point
    peak_value: float
    median: float
    scale: float  # the deviation a value is measured in
    spread: float  # the baseline's own robust deviation
    last: Point | None = None  # the latest line of it
    lines: int = 1
    decided: bool = False  # drafted as a divergence already: nothing more until it is over


class Spike:
    """Spikes of one quantity (the loss, the gradient norm): at least ``z`` deviations and ``ratio``
    times above the median of the baseline, which only healthy values join."""

    def __init__(self, name: str, *, z: float, ratio: float) -> None:
        self.name, self.z, self.ratio = name, z, ratio
        self.baseline = RobustBaseline(WINDOW)
        self.seen = 0
        self.open: _Episode | None = None
        self.last_span: tuple[int, int] | None = None  # lines of the latest episode

    def observe(self, point: Point, reading: Reading) -> SeriesFinding | None:
        value = reading.value
        if not math.isfinite(value):
            return None  # a NaN is drafted by its line (training.nan), not as a spike
        self.seen += 1
        episode = self.open
        if episode is None:
            # the ratio first: it costs nothing, and the deviation is only needed above it
            if self.seen > WARMUP and len(self.baseline) >= MIN_HISTORY and self._high(value, self.baseline.median()):
                median, spread, z = self.baseline.score(value, floor=MIN_DEVIATION)
                if z > self.z:
                    scale = max(spread, MIN_DEVIATION * abs(median), 1e-12)
                    self.open = _Episode(point, point, value, median, scale, spread)
                    self.last_span = (point.line, point.line)
                    return None
            self.baseline.add(value)
            return None
        episode.lines, episode.last = episode.lines + 1, point
        self.last_span = (episode.start.line, point.line)
        if value > episode.peak_value:
            episode.peak, episode.peak_value = point, value
        if (value - episode.median) / episode.scale <= RECOVER_Z:
            self.open = None
            self.baseline.add(value)
            return None if episode.decided else self._finding(RECOVERED, episode, point, value)
        if not episode.decided and self._too_long(episode, point):
            episode.decided = True
            return self._finding(DIVERGED, episode, point, value)
        return None

    def _high(self, value: float, median: float) -> bool:
        return value >= self.ratio * median if median > 0 else value > median

    def finish(self) -> SeriesFinding | None:
        """The log ends: a spike still up after MIN_OPEN progress lines did not come back."""
        episode, self.open = self.open, None
        if episode is None or episode.decided or episode.lines < MIN_OPEN:
            return None
        return self._finding(DIVERGED, episode, episode.last or episode.start, episode.peak_value, ended=True)

    @staticmethod
    def _too_long(episode: _Episode, point: Point) -> bool:
        if episode.start.step is not None and point.step is not None and point.step > episode.start.step:
            return point.step - episode.start.step > PATIENCE_STEPS
        return episode.lines > PATIENCE_LINES

    def _finding(self, mode: str, episode: _Episode, end: Point, value: float, *, ended: bool = False) -> SeriesFinding:
        median, peak = episode.median, episode.peak_value
        ratio = f"{peak / median:.1f}x the median" if median > 0 else "above the median"
        rise = (f"{self.name} rose from its median {g(median)} (robust deviation {g(episode.spread)}, over the "
                f"{len(self.baseline)} progress lines before) to {g(peak)} at {episode.peak.place()}: {ratio}, "
                f"{(peak - median) / episode.scale:.0f} deviations above it")
        span = steps_between(episode.start, end)
        if mode == RECOVERED:
            fate = f"recovered: back to {g(value)} at {end.place()}, {span} after it started at {episode.start.place()}"
        elif ended:
            fate = (f"not recovered: the log ends {steps_between(episode.start, end)} after it started at "
                    f"{episode.start.place()}, still up")
        else:
            patience = f"{PATIENCE_STEPS} steps" if span.endswith("steps") else f"{PATIENCE_LINES} progress lines"
            fate = (f"not recovered: still {g(value)} at {end.place()}, {span} after it started at "
                    f"{episode.start.place()} (patience {patience})")
        lines = quoted(("start", episode.start), ("peak", episode.peak), ("end" if mode == RECOVERED else "latest", end))
        return SeriesFinding(mode, f"{self.name} {g(median)} to {g(peak)}", episode.start, (rise, fate, *lines))
