"""The loss's course where a log gives too few progress lines for a baseline: a short paste, a run
that logs once an epoch, a log read from the middle of a run.

:class:`~tooling.logs.spikes.Spike` and :class:`~tooling.logs.trends.Flat` judge a value against
the robust baseline of many progress lines before it (a warm-up of 30 lines, a plateau of 100);
a run that logs one line an epoch, or a paste of a dozen lines, never gets there. What the few
lines show all the same, judged against the run's own earlier values, never a fixed loss:

- :class:`Blowup`: a loss :data:`BLOWUP` times the median of the readings before it: not noise
  but orders of magnitude (training.divergence); where one reading only came before it (a paste
  that starts on the run's last sane step), the jump must also hold :data:`LEAP_HOLD` readings at
  :data:`LEAP` times that reading, as :class:`Leap`'s level does: one reading is a weak baseline;
- :class:`Leap`: a loss :data:`LEAP` times the median of the readings before it that stays there
  for :data:`LEAP_HOLD` readings in a row: a level the run jumped to, not a spike that passes
  (training.divergence);
- :class:`Climb`: a loss that rose on :data:`CLIMB_LINES` readings in a row, by :data:`CLIMB`
  overall: the smoothed losses frameworks print fall or wander, they do not climb line after line
  (training.divergence); not a running sum printed as it grows, which adds the same each line.
  A gradient norm is spikier than a loss (clipping absorbs most), so its climb must be steeper:
  :data:`NORM_CLIMB_LINES` rises in a row to :data:`NORM_CLIMB` times the first, a norm that
  compounds step after step (an optimizer feeding back on itself) where noise would have turned;
- :class:`Stuck`: a loss held at a classifier's chance level, ln k for k classes (a model that
  predicts the uniform distribution, ln 2 = 0.6931, ln 4 = 1.3863) over :data:`CHANCE_LINES`
  readings; or moving, yet held within :data:`TIGHT` of its median over :data:`TIGHT_LINES`
  readings: a noise band around a level, tighter than a learning model's progress
  (training.plateau). A loss printed alike line after line is not judged here: a smoothed loss
  may fall below its printed digits, and :class:`~tooling.logs.trends.Flat` wants 1000 steps of it.
"""
from __future__ import annotations

import math
from statistics import median

from tooling.logs.numbers import Reading, significant_digits
from tooling.logs.spikes import DIVERGED, Point, SeriesFinding, g, quoted, steps_between

PLATEAU = "training.plateau"
READINGS = 100  # of a run, judged here; after them the baselines of spikes.Spike and trends.Flat judge
BLOWUP = 1000.0  # times the median of the readings before: three orders of magnitude
BLOWUP_BEFORE = 2  # readings before it, at least
LEAP, LEAP_BEFORE, LEAP_HOLD = 10.0, 5, 3  # times the median of so many readings before, held so many in a row
CLIMB_LINES, CLIMB = 10, 1.2  # rises in a row, and the last reading over the first
# a grad norm's: 8 rises in a row is a chance of 1 in 9! (362,880) for readings that only wander,
# and ten times the first is beyond what a warm-up's norm does between a few logged steps
NORM_CLIMB_LINES, NORM_CLIMB = 8, 10.0
CHANCE_CLASSES = range(2, 11)  # k of ln k: above 10 the values crowd together and prove nothing
CHANCE_TOLERANCE = 0.001  # of ln k: a loss printed 1.3864 is at ln 4, one printed 1.39 may not be
CHANCE_LINES = 4
TIGHT, TIGHT_LINES, TIGHT_DIGITS = 0.0015, 8, 4  # range over median; readings; digits they are written with


class Blowup:
    """A loss BLOWUP times the median of the readings before it; from one reading, held (LEAP_HOLD)."""

    def __init__(self) -> None:
        self.before: list[tuple[Point, float]] = []
        self.fired = False
        self.held: tuple[Point, Reading, float, int] | None = None  # from one reading: (jump, its reading, usual, held)

    def observe(self, point: Point, reading: Reading) -> SeriesFinding | None:
        value, before = reading.value, self.before
        if not math.isfinite(value):
            self.held = None
            return None  # a NaN is drafted by its line (training.nan)
        if self.held is not None:
            return self._hold(point, reading)
        usual = median(v for _, v in before) if len(before) >= BLOWUP_BEFORE else None
        lone = before[0][1] if len(before) == 1 else None
        before.append((point, value))
        del before[:-20]  # the latest readings are the run's usual
        if not self.fired and lone is not None and lone > 0 and value >= BLOWUP * lone:
            self.held = (point, reading, lone, 1)
            return None
        if self.fired or usual is None or usual <= 0 or value < BLOWUP * usual:
            return None
        self.fired = True
        first = before[0][0]
        text = (f"{reading.key} jumped to {reading.raw} at {point.place()}: {value / usual:,.0f}x the median "
                f"{g(usual)} of the {len(before) - 1} readings before it, from {first.place()}")
        return SeriesFinding(DIVERGED, f"{reading.key} {g(usual)} to {reading.raw}", point,
                             (text, *quoted(("before", before[-2][0]), ("jump", point))))

    def _hold(self, point: Point, reading: Reading) -> SeriesFinding | None:
        """A jump from the one reading before it, followed while it holds LEAP times that reading."""
        assert self.held is not None
        jump, first, usual, held = self.held
        last_point, last_value = self.before[-1]
        if (point.step, reading.value) == (last_point.step, last_value) and point.step is not None:
            return None  # the same step's reading printed again (absl and the logger each write it)
        self.before.append((point, reading.value))
        if reading.value < LEAP * usual:
            self.held = None  # back down: a spike
            return None
        self.held = (jump, first, usual, held + 1)
        if held + 1 < LEAP_HOLD:
            return None
        self.fired, self.held = True, None
        text = (f"{first.key} jumped to {first.raw} at {jump.place()}, {first.value / usual:,.0f}x the one reading "
                f"before it ({g(usual)}, at {self.before[0][0].place()}), and stayed {LEAP:g}x above it for "
                f"{held + 1} readings, to {reading.raw} at {point.place()} ({steps_between(jump, point)})")
        return SeriesFinding(DIVERGED, f"{first.key} {g(usual)} to {first.raw}, held", jump,
                             (text, *quoted(("before", self.before[0][0]), ("jump", jump), ("latest", point))))


class Leap:
    """A loss LEAP times the median of the readings before it, held there for LEAP_HOLD readings
    in a row (Keras' 0.74, then 13.36, 26.64, 26.65): one reading so high and back is a spike, and
    one BLOWUP times as high is Blowup's at once."""

    def __init__(self) -> None:
        self.before: list[float] = []
        self.open: tuple[Point, Reading, float, int] | None = None  # (start, its reading, usual, readings held)
        self.fired = False

    def observe(self, point: Point, reading: Reading) -> SeriesFinding | None:
        value = reading.value
        if not math.isfinite(value):
            self.open = None
            return None  # a NaN is drafted by its line (training.nan)
        if self.open is not None:
            start, first, usual, held = self.open
            if value >= LEAP * usual:
                self.open = (start, first, usual, held + 1)
                return self._finding(point, reading) if held + 1 >= LEAP_HOLD else None
            self.open = None  # back down: a spike, and the readings it held are not the run's usual
        usual = median(self.before) if len(self.before) >= LEAP_BEFORE else 0.0
        if not self.fired and usual > 0 and LEAP * usual <= value < BLOWUP * usual:
            self.open = (point, reading, usual, 1)
            return None
        self.before.append(value)
        del self.before[:-20]  # the latest readings are the run's usual
        return None

    def _finding(self, point: Point, reading: Reading) -> SeriesFinding:
        start, first, usual, held = self.open or (point, reading, 1.0, 1)
        self.fired, self.open = True, None
        text = (f"{first.key} jumped to {first.raw} at {start.place()}, {first.value / usual:,.0f}x the median "
                f"{g(usual)} of the readings before it, and stayed {LEAP:g}x above it for {held} readings, "
                f"to {reading.raw} at {point.place()} ({steps_between(start, point)}): a level, not a spike")
        return SeriesFinding(DIVERGED, f"{first.key} {g(usual)} to {first.raw}, held", start,
                             (text, *quoted(("jump", start), ("latest", point))))


class Climb:
    """A loss that rose on CLIMB_LINES readings in a row, by CLIMB overall (a grad norm: ``lines``
    NORM_CLIMB_LINES, ``factor`` NORM_CLIMB)."""

    def __init__(self, lines: int = CLIMB_LINES, factor: float = CLIMB) -> None:
        self.lines, self.factor = lines, factor
        self.start: tuple[Point, float] | None = None
        self.last: float | None = None
        self.rises = 0
        self.fired = False
        self.steps: list[float] = []  # the latest rises

    def _summed(self, first: float) -> bool:
        """Whether the readings are a running sum, not a loss: each adds about as much as the first
        reading was (``loss: 230.5``, ``461.2``, ``690.8``: an epoch's total printed as it grows)."""
        usual = median(self.steps)
        return abs(usual - first) <= 0.25 * first and max(self.steps) - min(self.steps) <= 0.5 * usual

    def observe(self, point: Point, reading: Reading) -> SeriesFinding | None:
        value, last = reading.value, self.last
        self.last = value
        if not math.isfinite(value):
            self.start, self.rises = None, 0
            return None
        if last is None or not value > last or self.start is None:
            self.start, self.rises, self.fired, self.steps = (point, value), 0, False, []
            return None
        self.rises += 1
        self.steps.append(value - last)
        del self.steps[:-self.lines]
        start, first = self.start
        if self.fired or self.rises < self.lines or first <= 0 or value < self.factor * first or self._summed(first):
            return None
        self.fired = True
        text = (f"{reading.key} rose on {self.rises} readings in a row, from {g(first)} at {start.place()} to "
                f"{reading.raw} at {point.place()} ({value / first:.2f}x, {steps_between(start, point)}): "
                f"climbing, not noise")
        return SeriesFinding(DIVERGED, f"{reading.key} {g(first)} to {reading.raw}, rising", start,
                             (text, *quoted(("start", start), ("latest", point))))


class Stuck:
    """A loss held at a chance level, or held tighter than a learning model's noise."""

    def __init__(self) -> None:
        self.run: list[tuple[Point, Reading]] = []
        self.fired = False

    def observe(self, point: Point, reading: Reading) -> SeriesFinding | None:
        if not math.isfinite(reading.value):
            self.run, self.fired = [], False
            return None
        self.run.append((point, reading))
        del self.run[:-TIGHT_LINES]
        if self.fired:
            return None
        found = self._chance() or self._tight()
        self.fired = found is not None
        return found

    def _chance(self) -> SeriesFinding | None:
        run = self.run[-CHANCE_LINES:]
        if len(run) < CHANCE_LINES:
            return None
        for k in CHANCE_CLASSES:
            level = math.log(k)
            if all(abs(r.value - level) <= CHANCE_TOLERANCE * level for _, r in run):
                return self._finding(run, f"at ln {k} = {level:.4f}, the loss of a {k}-way classifier that "
                                          f"predicts every class alike: chance level")
        return None

    def _tight(self) -> SeriesFinding | None:
        run = self.run
        values = [r.value for _, r in run]
        if len(run) < TIGHT_LINES or min(significant_digits(r.raw) for _, r in run) < TIGHT_DIGITS:
            return None
        middle = median(values)
        if len(set(values)) == 1:
            return None  # a loss printed alike may be smoothed, falling below its digits: trends.Flat's to judge
        if middle <= 0 or max(values) - min(values) > TIGHT * middle:
            return None
        half, spread = len(values) // 2, max(values) - min(values)
        if sum(values[half:]) / (len(values) - half) < sum(values[:half]) / half - spread / 4:
            return None  # still falling, however slowly: a trend, not a band
        return self._finding(run, f"within {g(max(values) - min(values))} of each other ("
                                  f"{(max(values) - min(values)) / middle:.2%} of {g(middle)}): tighter than the "
                                  f"noise of a model that still learns")

    def _finding(self, run: list[tuple[Point, Reading]], why: str) -> SeriesFinding:
        (first, reading), (last, _) = run[0], run[-1]
        text = (f"{reading.key} held over {len(run)} readings, {steps_between(first, last)} from {first.place()} "
                f"to {last.place()}, {why}")
        return SeriesFinding(PLATEAU, f"{reading.key} {reading.raw} for {steps_between(first, last)}", first,
                             (text, *quoted(("first", first), ("latest", last))))
