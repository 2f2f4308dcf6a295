"""A robust running baseline: the median and the median absolute deviation (MAD) of a window.

The loss-spike guard (:mod:`tooling.resilience.loss_spike`) measures how far a step's loss or
gradient norm lies above what the recent steps make normal. Mean and standard deviation would be
dragged along by the very spike they are meant to show (one loss of 50 among losses of 2 moves
the mean and inflates the deviation); median and MAD do not move for a few outliers. The window
is kept sorted as it slides (one insertion and one deletion a step), so the median costs nothing;
and so does the MAD: the deviations above the median and those below it are two sorted runs of
the window, and the middle of both together is found by bisection (:func:`median_deviation`),
without sorting or even listing them.
"""
from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections import deque

# MAD x 1.4826 is the standard deviation of a normal distribution: a deviation of 6 means what
# six sigma means, whatever the noise level of this run's loss
NORMAL_SCALE = 1.4826


class RobustBaseline:
    """Median and scaled MAD of the last ``size`` values added."""

    def __init__(self, size: int) -> None:
        if size < 3:
            raise ValueError(f"the baseline window must hold at least 3 values, got {size}")
        self.size = size
        self._arrival: deque[float] = deque()
        self._sorted: list[float] = []

    def __len__(self) -> int:
        return len(self._arrival)

    def add(self, value: float) -> None:
        """One more value (finite ones only: a NaN would sort nowhere), the oldest dropped when full."""
        if not math.isfinite(value):
            raise ValueError(f"the baseline takes finite values only, got {value}")
        if len(self._arrival) == self.size:
            oldest = self._arrival.popleft()
            del self._sorted[bisect_left(self._sorted, oldest)]
        self._arrival.append(value)
        insort(self._sorted, value)

    def median(self) -> float:
        return _median(self._sorted)

    def deviation(self) -> float:
        """The MAD scaled to a normal distribution's standard deviation (0 for a flat window)."""
        return NORMAL_SCALE * median_deviation(self._sorted)

    def above(self, value: float, *, floor: float) -> float:
        """How many deviations ``value`` lies above the median; 0 for a value at or below it (the
        common case, answered without the deviation's sort)."""
        if value <= self.median():
            return 0.0
        return self.score(value, floor=floor)[2]

    def score(self, value: float, *, floor: float) -> tuple[float, float, float]:
        """(median, deviation, z): how many deviations ``value`` lies above the median, the
        deviation taken as at least ``floor`` times the median's size (so that a loss flat to its
        last digit is no hair trigger). A non-finite value is infinitely far above."""
        middle, spread = self.median(), self.deviation()
        scale = max(spread, floor * abs(middle), 1e-12)
        z = (value - middle) / scale if math.isfinite(value) else math.inf
        return middle, spread, z


def _median(ordered: list[float]) -> float:
    n = len(ordered)
    if n == 0:
        raise ValueError("the median of no values")
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def median_deviation(ordered: list[float]) -> float:
    """The median of |v - median| over the sorted ``ordered``, in O(log n) steps."""
    n = len(ordered)
    middle = _median(ordered)
    split = bisect_left(ordered, middle)  # ordered[:split] lie below the median, ordered[split:] at or above
    above, below = n - split, split

    def up(i: int) -> float:  # the i-th smallest deviation above (ascending)
        return ordered[split + i] - middle

    def down(j: int) -> float:  # the j-th smallest deviation below (ascending)
        return middle - ordered[split - 1 - j]

    def kth(k: int) -> float:
        """The k-th smallest (from 0) of both runs: take i from above and k + 1 - i from below,
        the least i for which the next one above is no smaller than the last one taken below."""
        low, high = max(0, k + 1 - below), min(k + 1, above)
        while low < high:
            i = (low + high) // 2
            if up(i) < down(k - i):
                low = i + 1
            else:
                high = i
        j = k + 1 - low
        return max(up(low - 1) if low > 0 else -math.inf, down(j - 1) if j > 0 else -math.inf)

    return kth(n // 2) if n % 2 else (kth(n // 2 - 1) + kth(n // 2)) / 2
