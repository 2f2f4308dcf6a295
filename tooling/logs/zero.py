"""A training loss that collapsed to exactly zero (for :class:`tooling.logs.series.Series`):
training.zero-loss.

A training loss is a mean of per-token or per-sample losses that are positive wherever a label
counts, so it reads exactly 0 only when nothing counts any more: every label masked to ignore_index
(-100), a loss multiplied by a zero mask, a NaN replaced by ``nan_to_num`` or an overflowed fp16 step
reported as 0, a clamp. The run goes on logging and learns nothing; no line says so. :class:`Zero`
drafts it when

- the loss reads exactly zero on :data:`ZERO_LINES` readings in a row (the same step printed twice,
  by absl and by the logger, is one reading);
- after a reading that was not zero: a run whose first readings are zero (a GRPO loss, zero at the
  start by construction) has nothing to collapse from;
- and the last reading before the zeros was far from zero as the log prints it: at least
  :data:`FROM_UNITS` units of the finest last digit the run's readings are written with, and at
  least :data:`SMOOTH` of the median of the readings before it. The precision is the run's, not the
  zero's own: the HF Trainer logs ``round(loss, 4)`` through Python's repr, which drops trailing
  zeros, so its '0.0' after '2.7197' is below 0.00005, not below 0.05. A loss printed 0.02, 0.01,
  0.00 was rounded to zero on its way down (1 unit); one printed 0.0003, 0.0001, 0.0000, or written
  in scientific notation 3.1e-05, 1.2e-06, 0.0e+00 (the last far below a quarter of the median
  before it), approached zero smoothly: a model that fits its data, not a loss that stopped counting.
"""
from __future__ import annotations

import math
from statistics import median

from tooling.logs.numbers import Reading, decimals
from tooling.logs.spikes import Point, SeriesFinding, g, quoted, steps_between

MODE = "training.zero-loss"
# A reading is most often the mean over a logging interval (LLaMA-Factory's 5 steps, the HF
# Trainer's 500), and it is zero only if every step of it was: one zero can be a batch of samples
# whose answers were all cut off, diluted in the next interval's mean; four in a row is four
# intervals in which not one token counted, one more than a level must hold in course.Leap.
ZERO_LINES = 4
FROM_UNITS = 10  # units of the printed last digit: 0.10 for a loss printed with two decimals
SMOOTH = 0.25  # of the median of the readings before: the loss was at its level, not falling to zero
BEFORE = 5  # non-zero readings kept: the run's level just before the zeros


class Zero:
    """A loss that reads exactly zero ZERO_LINES times in a row after one far from zero; once a run."""

    def __init__(self) -> None:
        self.before: list[tuple[Point, Reading]] = []  # the latest readings that were not zero
        self.zeros: list[Point] = []  # the zero readings in a row so far
        self.unit: float | None = None  # the finest last digit of the run's fixed-point readings
        self.fired = False

    def observe(self, point: Point, reading: Reading) -> SeriesFinding | None:
        if not math.isfinite(reading.value):
            self.zeros = []  # a NaN is drafted by its line (training.nan), and breaks the row
            return None
        places = decimals(reading.raw)
        if places is not None:
            self.unit = min(self.unit or 1.0, 10.0 ** -places)
        if reading.value != 0:
            self.before.append((point, reading))
            del self.before[:-BEFORE]
            self.zeros = []
            return None
        if self.zeros and point.step is not None and point.step == self.zeros[-1].step:
            return None  # the same step's reading printed again
        self.zeros.append(point)
        if self.fired or len(self.zeros) < ZERO_LINES or not self._collapsed():
            return None
        self.fired = True
        return self._finding(reading)

    def _collapsed(self) -> bool:
        """Whether the reading before the zeros was far from zero, as printed and for the run."""
        if not self.before:
            return False  # zero from the first reading: nothing to collapse from
        last = self.before[-1][1].value
        usual = median(r.value for _, r in self.before)
        return last > 0 and last >= FROM_UNITS * (self.unit or 0.0) and last >= SMOOTH * usual

    def _finding(self, reading: Reading) -> SeriesFinding:
        (last_point, last), first, latest = self.before[-1], self.zeros[0], self.zeros[-1]
        usual = median(r.value for _, r in self.before)
        shown = (f"; the run prints its loss to {g(self.unit)}, so {last.raw} is {last.value / self.unit:,.0f} "
                 f"units of its last digit above zero, not a small loss rounded down") if self.unit else ""
        level = "the one reading before the zeros" if len(self.before) == 1 else \
            f"the median of the {len(self.before)} readings before the zeros: {g(usual)}"
        text = (f"{reading.key} fell from {last.raw} at {last_point.place()} ({level}) to exactly {reading.raw} at "
                f"{first.place()}, and read zero on "
                f"{len(self.zeros)} readings in a row to {latest.place()} ({steps_between(first, latest)}): nothing "
                f"counts toward the loss any more{shown}")
        return SeriesFinding(MODE, f"{reading.key} {last.raw} to {reading.raw}", first,
                             (text, *quoted(("before", last_point), ("first zero", first), ("latest", latest))))
