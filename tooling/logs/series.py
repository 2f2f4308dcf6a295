"""What only the numbers show: the series of a log's progress lines, read as they come.

A line says "loss 7.9"; only the lines before it say that 7.9 is a spike. :class:`Series` is fed
the numbers of a log's progress lines in log order (:mod:`tooling.logs.numbers`; which lines,
:mod:`tooling.logs.sampling`) and the lines that change the fp16 loss scale, and returns a
:class:`SeriesFinding` when the series shows

- a loss or gradient-norm spike (:mod:`tooling.logs.spikes`): far above the robust baseline of
  the steps before it (a running median and MAD, the loss-spike guard's), and whether it came back
  (training.loss-spike-recovered) or not (training.divergence);
- a loss scale halved down to its floor, or on every step in a row (:mod:`tooling.logs.scale`);
- a plateau, a throughput drop or slow steps, a stall seen as a gap in the timestamps
  (:mod:`tooling.logs.trends`);
- where the lines are too few for a baseline, a loss that jumps by orders of magnitude, climbs line
  after line, or is held at a chance level (:mod:`tooling.logs.course`); a progress bar whose own
  clock says an interval went several times slower (:mod:`tooling.logs.bars`);
- a loss that collapsed to exactly zero and stays there (:mod:`tooling.logs.zero`).

Each finding carries its numbers as evidence: the lines where it starts, peaks and ends, the
baseline and the ratio. Memory is bounded: a window of values per series, a few lines kept.
"""
from __future__ import annotations

from tooling.logs.bars import Stretch
from tooling.logs.course import NORM_CLIMB, NORM_CLIMB_LINES, READINGS, Blowup, Climb, Leap, Stuck
from tooling.logs.numbers import Numbers
from tooling.logs.spikes import SeriesFinding, Point, Spike
from tooling.logs.scale import ScaleFloor
from tooling.logs.trends import Flat, Gap, Slowdown
from tooling.logs.zero import Zero


class Series:
    """Every series of one log (see the module's docstring); feed it in log order."""

    def __init__(self) -> None:
        self.gap, self.scale, self.bars = Gap(), ScaleFloor(), Stretch()
        self.step: int | None = None  # of the latest progress line that gave one
        self._start()

    def _start(self) -> None:
        """The run's own baselines, from scratch: at a log's start, and where its step counter goes
        back (the run restarted, from a checkpoint or from nothing: warm-up and all again)."""
        self.loss = Spike("loss", z=8.0, ratio=1.3)
        self.norm = Spike("grad norm", z=10.0, ratio=3.0)  # gradient norms are spikier: clipping absorbs most
        self.flat, self.slow, self.zero = Flat(), Slowdown(), Zero()
        self.course = (Blowup(), Leap(), Climb(), Stuck())
        self.norm_climb = Climb(NORM_CLIMB_LINES, NORM_CLIMB)  # a grad norm that compounds, too few lines for a baseline

    def observe(self, point: Point, numbers: Numbers) -> list[SeriesFinding]:
        found: list[SeriesFinding | None] = [self.gap.observe(point)]
        self.scale.stepped()
        if numbers.step is not None:
            if self.step is not None and numbers.step < self.step:
                found += [self.loss.finish(), self._norm(self.norm.finish())]  # what the run before showed
                self._start()
            self.step = numbers.step
        if numbers.loss is not None:
            found += [self.loss.observe(point, numbers.loss), self.flat.observe(point, numbers.loss),
                      self.zero.observe(point, numbers.loss)]
            if self.loss.seen <= READINGS:  # a short log, or a run's start: no baseline yet
                found += [shape.observe(point, numbers.loss) for shape in self.course]
        if numbers.grad_norm is not None:
            found.append(self._norm(self.norm.observe(point, numbers.grad_norm)))
            if self.norm.seen <= READINGS:
                found.append(self.norm_climb.observe(point, numbers.grad_norm))
        if numbers.loss_scale is not None:
            found.append(self.scale.observe(point, None, numbers.loss_scale.value))
        if numbers.bar is not None:
            found.append(self.bars.observe(point, numbers.bar))
        if numbers.speed is not None or numbers.step_time is not None:
            found.append(self.slow.observe(point, numbers.speed, numbers.step_time))
        return [finding for finding in found if finding is not None]

    def scale_changed(self, point: Point, before: float | None, after: float) -> list[SeriesFinding]:
        """A line that reduced the fp16 loss scale from ``before`` to ``after``."""
        found = self.scale.observe(point, before, after)
        return [found] if found else []

    def finish(self) -> list[SeriesFinding]:
        """The log ends (tooling scan; a watched log goes on)."""
        found = [self.loss.finish(), self._norm(self.norm.finish()), self.slow.finish()]
        return [finding for finding in found if finding is not None]

    def _norm(self, finding: SeriesFinding | None) -> SeriesFinding | None:
        """A gradient-norm spike the loss spiked with is the loss's spike, drafted once."""
        loss, norm = self.loss.last_span, self.norm.last_span
        if finding is None or self.loss.open is not None:
            return None
        if loss is not None and norm is not None and loss[0] <= norm[1] and norm[0] <= loss[1]:
            return None
        return finding
