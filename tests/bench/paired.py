"""Timing shared by the benchmarks of a per-step cost: wall seconds of a call, and paired rounds.

In paired rounds each round times the loop without the thing measured, then with it, and keeps
their ratio: a slow moment of a shared machine hits both halves of a pair, so the median ratio
holds where two separate runs of a minute each would not.
"""
from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


def threads(default: int = 2) -> int:
    """PyTorch's threads for a benchmark's loop: ``default``, or OMP_NUM_THREADS where the caller set
    it. The suite's parallel run sets 1 (tests/conftest.py): there two threads per process spin
    against the other workers' processes on two cores, for the same figures of a smoke test."""
    return int(os.environ.get("OMP_NUM_THREADS") or default)


def seconds(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


@dataclass(frozen=True)
class Paired:
    bare_ms: float  # median milliseconds per step without
    low: float  # quartiles of the with/without ratios
    mid: float
    high: float
    rounds: int

    def spread(self, digits: int = 2) -> str:
        """'median of N paired rounds; middle half -x% to +y%'."""
        return (f"median of {self.rounds} paired rounds; middle half {self.low - 1:+.{digits}%} to "
                f"{self.high - 1:+.{digits}%}")


def paired_rounds(steps: Callable[[bool], None], *, rounds: int, steps_per_round: int) -> Paired:
    """``steps(with_it)`` runs one round's steps; ``rounds`` pairs of them timed, without first."""
    bare_times, ratios = [], []
    for _ in range(rounds):
        bare = seconds(lambda: steps(False))
        ratios.append(seconds(lambda: steps(True)) / bare)
        bare_times.append(bare)
    low, mid, high = statistics.quantiles(ratios, n=4)
    return Paired(statistics.median(bare_times) / steps_per_round * 1000, low, mid, high, rounds)
