"""The fp16 loss scale's course (for :class:`tooling.logs.series.Series`): training.fp16-overflow
when it collapses.

A dynamic loss scale halves on every overflow (the step is skipped) and grows again after a window
of clean steps. Two shapes of a collapse, each measured in halvings, never a fixed scale a run
must keep:

- :class:`ScaleFloor`: halved over and over down to :data:`FLOOR`, from :data:`COLLAPSE` times
  higher, where it has no room left;
- a streak (:class:`Streak`): halved on every step, :data:`STREAK` steps in a row, down to
  :data:`LOW` or below from above it: every step overflows and none trains, well before the floor
  is reached (sweep 7's trlx PPO run, 4096 down to 256 in four steps). A run's first overflows
  halve a few times in a row too, while the scale searches down from where it was initialised
  (2^16 for torch.amp, apex and DeepSpeed, up to 2^32), and stop thousands of times above LOW;
  a scale halved once in a while, with clean steps between, is no streak;
- already far below the floor (:data:`DEPTH`) when the log shows it, the collapse itself before
  the paste begins: fairseq, whose floor is 0.0001, prints its scale 'loss_scale 0' (rounded) or
  halves it to 0.00024 before it raises 'Minimum loss scale reached' (sweep 12's two fairseq runs).
  A healthy fairseq run sits at 1.0 and dips to 0.5 (sweep 9's), one halving, not eight.
"""
from __future__ import annotations

import math

from tooling.logs.spikes import SeriesFinding, Point, g, quoted

MODE = "training.fp16-overflow"
FLOOR = 1.0  # a loss scale at or below 1 has no room left: DeepSpeed's and Megatron's minimum
COLLAPSE = 256.0  # from at least 2^8 times higher: halved over and over, not an early overflow's skip
HALVINGS_SEEN = 3  # reductions seen on the way down: one jump from 2^23 to 1 is another run's line, or a reset
STREAK = 4  # halvings in a row: one more than a healthy start's search shows (sweep 7's T5 run: 3)
LOW = 256.0  # 2^8, eight halvings below the usual initial 2^16: no run's search for its level ends there
DEPTH = FLOOR / COLLAPSE  # 2^-8: as many halvings below the floor as a collapse falls to reach it
BETWEEN = 2  # progress lines at most between two halvings of a streak: the skipped step's own, and one


class Streak:
    """The scale halved on every step, STREAK steps in a row, down to LOW from above it."""

    def __init__(self) -> None:
        self.count, self.top = 0, 0.0  # halvings in a row, the scale before the first
        self.start: Point | None = None  # the line of the first
        self.between = 0  # progress lines since the last halving

    def stepped(self) -> None:
        self.between += 1

    def observe(self, point: Point, before: float | None, last: float | None, after: float) -> bool:
        """A reading of the scale (``before`` it, if the line says; ``last`` read): whether it ends
        a streak."""
        prior = before if before is not None else last
        if prior is not None and 0 < after <= prior / 2:  # halved (or more)
            if self.count == 0 or self.between > BETWEEN:
                self.count, self.top, self.start = 0, prior, point
            self.count, self.between = self.count + 1, 0
        elif prior is not None and after > prior:  # it grew again: steps went through
            self.count = 0
        return self.count >= STREAK and after <= LOW < self.top

    def finding(self, point: Point, after: float) -> SeriesFinding:
        start = self.start or point
        text = (f"loss scale halved on {self.count} steps in a row, from {g(self.top)} at {start.place()} to "
                f"{g(after)} at {point.place()}, at most {BETWEEN} progress lines between two halvings: every step "
                f"overflows and is skipped; at {g(LOW)} or below, where a run's first overflows never take it "
                f"(they stop thousands of times higher)")
        self.count = 0
        return SeriesFinding(MODE, f"loss scale {g(self.top)} to {g(after)}, halved every step", point,
                             (text, *quoted(("first halving", start), ("latest", point))))


class ScaleFloor:
    """The fp16 loss scale halved over and over down to FLOOR, from COLLAPSE times higher, or on
    every step in a streak (:class:`Streak`): training.fp16-overflow (a bf16 run's constant
    "loss scale: 1.0" never rose, so never fell). One finding per collapse."""

    def __init__(self) -> None:
        self.peak: Point | None = None
        self.peak_value = 0.0
        self.last: float | None = None
        self.reductions = 0
        self.fired = False
        self.streak = Streak()

    def stepped(self) -> None:
        """A progress line was read (a step went by)."""
        self.streak.stepped()

    def observe(self, point: Point, before: float | None, after: float) -> SeriesFinding | None:
        for value in (before, after):
            if value is not None and value > self.peak_value:
                self.peak, self.peak_value, self.reductions = point, value, 0
        if (self.last is not None and after < self.last) or (before is not None and after < before):
            self.reductions += 1
        streak = self.streak.observe(point, before, self.last, after)
        self.last = after
        if after >= COLLAPSE:
            self.fired = False
        if streak and not self.fired:
            self.fired = True
            return self.streak.finding(point, after)
        if after <= DEPTH and not self.fired:
            return self._depth(point, after)
        if self.fired or self.peak is None or after > FLOOR or self.peak_value < COLLAPSE \
                or self.reductions < HALVINGS_SEEN:
            return None
        return self._floor(point, after)

    def _depth(self, point: Point, after: float) -> SeriesFinding:
        self.fired = True
        text = (f"loss scale {g(after)} at {point.place()}: {g(DEPTH)} or below, "
                f"{math.log2(COLLAPSE):.0f} or more halvings under the floor ({g(FLOOR)}) that DeepSpeed, Megatron "
                f"and apex stop at; only a scale that overflowed at every level on the way gets there")
        return SeriesFinding(MODE, f"loss scale {g(after)}, far below {g(FLOOR)}", point, (text, *quoted(("scale", point),)))

    def _floor(self, point: Point, after: float) -> SeriesFinding:
        self.fired = True
        peak, top = self.peak, self.peak_value
        assert peak is not None
        halvings = math.log2(top / after) if after > 0 else math.inf
        text = (f"loss scale fell from {g(top)} at {peak.place()} to {g(after)} at {point.place()}: halved "
                f"{halvings:.0f} times, {self.reductions} reductions seen; at {g(FLOOR)} or below it has no room "
                f"left to absorb an fp16 overflow")
        self.peak, self.peak_value = None, 0.0
        return SeriesFinding(MODE, f"loss scale {g(top)} to {g(after)}", point,
                             (text, *quoted(("peak", peak), ("floor", point))))
