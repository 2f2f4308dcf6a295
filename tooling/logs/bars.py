"""A throughput drop seen in a progress bar's own clock (tqdm's ``1199/3000 [2:49:04<14:04:18, 28.13s/it``).

The rate a bar prints is smoothed over its recent items, and after a pause (a checkpoint saved,
samples generated) it shows nonsense for a while, thousands of items a second; its count and
elapsed time are exact. So :class:`Stretch` reads, between two lines of the same bar, the seconds
an item took (elapsed time over items done since), and calls an interval
:data:`STRETCH` times slower than the median of the intervals before it, lasting
:data:`LOST_SECONDS` more than they would have, and over at least :data:`MIN_ITEMS` items (not one
step's pause for an evaluation), a training.throughput-drop. Bars are told apart by their labels:
an evaluation's bar is not the training's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median

from tooling.logs.numbers import Bar
from tooling.logs.spikes import Point, SeriesFinding, g, quoted

DROP = "training.throughput-drop"
STRETCH = 5.0  # times the usual seconds an item took
LOST_SECONDS = 600.0  # time lost to the slowdown, at least: ten minutes
MIN_ITEMS = 5  # items the slow interval spans, at least
BEFORE = 2  # intervals measured before one is judged
BARS = 8  # bars followed at once (a log's training bar and its evaluations')


@dataclass
class _Bar:
    last: tuple[Point, Bar]
    intervals: list[float] = field(default_factory=list)  # seconds an item took, interval by interval
    fired: bool = False


class Stretch:
    """Intervals of each progress bar, for an interval STRETCH times slower than the bar's usual."""

    def __init__(self) -> None:
        self.bars: dict[str, _Bar] = {}

    def observe(self, point: Point, bar: Bar) -> SeriesFinding | None:
        seen = self.bars.get(bar.label)
        if seen is None or bar.done < seen.last[1].done or bar.elapsed < seen.last[1].elapsed:
            self.bars[bar.label] = _Bar((point, bar))  # a new bar, or this one started again
            if len(self.bars) > BARS:
                del self.bars[next(iter(self.bars))]
            return None
        (before, last), items = seen.last, bar.done - seen.last[1].done
        if items <= 0:
            return None
        seen.last = (point, bar)
        each = (bar.elapsed - last.elapsed) / items
        usual = median(seen.intervals) if len(seen.intervals) >= BEFORE else None
        seen.intervals = (seen.intervals + [each])[-50:]
        if seen.fired or usual is None or usual <= 0 or items < MIN_ITEMS or each < STRETCH * usual \
                or (each - usual) * items < LOST_SECONDS:
            return None
        seen.fired = True
        name = f"the progress bar {bar.label!r}" if bar.label else "the progress bar"
        text = (f"{name} took {g(each)} s an item over items {last.done}-{bar.done}, from {before.place()} to "
                f"{point.place()}: {each / usual:.1f}x its usual {g(usual)} s (the median of the "
                f"{len(seen.intervals) - 1} intervals before), {(each - usual) * items / 60:,.0f} minutes lost "
                f"(its count and elapsed time, not the rate it prints)")
        return SeriesFinding(DROP, f"{g(each)} s an item, {each / usual:.1f}x its usual", point,
                             (text, *quoted(("before", before), ("after", point))))
