"""Stragglers: which rank, on which node, has fallen behind the others.

In synchronous training the slowest rank sets everyone's pace: the others wait for it in the
next collective, so every rank's whole step takes as long and the step time alone cannot say
which rank it is. Each rank times its own work instead (data, forward, backward: what comes
before the gradients' all-reduce), and the detector compares the ranks::

    detector = StragglerDetector()           # every=10 steps, threshold=0.75, patience=3 reports
    for step in ...:
        with detector.timed():               # this rank's own work, no collective inside
            loss = model(next(batches)).mean()
            loss.backward()
        all_reduce_gradients(model)          # not timed: it waits for the slowest rank
        optimizer.step()

Timing a step costs two clock reads and a list append (tests/bench/bench_stragglers.py). Every
``every`` steps each rank sends the median of its last ``every`` times in one all_gather of one
float (the node names travel once, at the first report), and every rank computes the same
relative scores, as NVIDIA's resiliency extension does (its relative performance score is a
reference time over the rank's): here the reference is the median rank's median, not the
fastest rank's, so that one rank lucky with the noise makes no other look slow. 1.0 is as fast
as the median rank, 0.5 twice as slow. A rank whose score stays below ``threshold`` for
``patience`` reports in a row is named, with its node (``SLURMD_NODENAME``, else the host name),
and logs one line about itself (logger ``tooling.resilience.stragglers``, WARNING)::

    straggler: rank=2 node=n2 score=0.53 (median 10.8 ms against 5.78 ms for the median rank; below 0.75 for 3 reports in a row, steps 0-29)

The failure-mode catalogue recognises it as ``training.throughput-drop`` and reads the rank and
the node from it, so ``tooling watch`` (or ``tooling scan --write``) on the job's log files it as
an incident with the node as evidence: the training process writes nothing of the records. The
slow rank logs it, not rank 0, so a per-rank prefix of the log (``[rank2]:``) and the line agree.
Every rank gets the names too (:meth:`StragglerDetector.record`'s answer and ``stragglers``) to
act on them together, e.g. stop so that the requeue swaps the node.

A healthy run names no one: the scores are relative (every rank slower alike, a slow file
system, is no straggler) and must stay low for ``patience`` reports (a noisy moment is not).
Without a process group there is no one to compare with, and the detector only records.
:func:`replay` says whom the detector would name from step times recorded elsewhere.
"""
from __future__ import annotations

import logging
import math
import os
import socket
import statistics
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Sequence

import torch
import torch.distributed as dist

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Straggler:
    rank: int
    node: str
    score: float  # at the report that named it: the median rank's median over this rank's
    median: float  # this rank's median time over the last interval, in seconds
    reference: float  # the median rank's, in seconds
    first_step: int  # the first step of the reports it was below the threshold in (counted from 0)
    last_step: int

    def line(self, threshold: float, reports: int) -> str:
        """The one line a named rank logs, which the catalogue recognises (training.throughput-drop)."""
        return (f"straggler: rank={self.rank} node={self.node} score={self.score:.2f} "
                f"(median {self.median * 1e3:.3g} ms against {self.reference * 1e3:.3g} ms for the median rank; "
                f"below {threshold:g} for {reports} reports in a row, steps {self.first_step}-{self.last_step})")


def node_name() -> str:
    """This process's node as SLURM names it (emulated nodes share one host name), else the host's."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname()


def usable(seconds: float) -> bool:
    """Whether a step's time enters a median: a finite number >= 0 (NaN fails both tests)."""
    return 0.0 <= seconds < math.inf


def interval_median(times: Sequence[float]) -> float:
    """A rank's median time over one report's steps (NaN: it had none usable)."""
    return statistics.median(times) if times else math.nan


def reference_time(medians: Sequence[float]) -> float:
    """The time scores are relative to: the median rank's median (NaN: no rank has one).
    ``median_low``: with two ranks it is the faster one, not their mean, which would keep a slow
    rank's score above one half however slow it is."""
    known = [m for m in medians if not math.isnan(m)]
    return statistics.median_low(known) if known else math.nan


def relative_scores(medians: Sequence[float]) -> list[float]:
    """Each rank's score from the ranks' median times: the reference time over its own. A rank
    without a time (NaN) or with none to speak of (0) scores 1.0: it shows no slowness."""
    reference = reference_time(medians)
    return [reference / m if m > 0 else 1.0 for m in medians]


class Scoreboard:
    """Which ranks stayed below ``threshold`` for ``patience`` reports of ``every`` steps in a
    row: the detector's decisions, fed one list of per-rank medians per report (no torch here)."""

    def __init__(self, ranks: Sequence[tuple[int, str]], *, every: int, threshold: float, patience: int) -> None:
        if every < 1 or patience < 1 or not 0 < threshold < 1:
            raise ValueError(f"every={every}, patience={patience}, threshold={threshold}: expected "
                             "every and patience of 1 or more and a threshold between 0 and 1")
        self.ranks = list(ranks)  # (global rank, node) of each rank of the group, in group order
        self.every, self.threshold, self.patience = every, threshold, patience
        self.below = [0] * len(self.ranks)  # reports in a row below the threshold, per rank
        self.stragglers: dict[int, Straggler] = {}  # named and still below, by global rank
        self.scores: list[float] = [1.0] * len(self.ranks)

    def report(self, medians: Sequence[float], *, last_step: int) -> list[Straggler]:
        """The ranks named at this report (each once, until its score comes back)."""
        self.scores = relative_scores(medians)
        reference, named = reference_time(medians), []
        for index, ((rank, node), score) in enumerate(zip(self.ranks, self.scores)):
            if score >= self.threshold:
                self.below[index] = 0
                self.stragglers.pop(rank, None)
                continue
            self.below[index] += 1
            if self.below[index] == self.patience:
                first = last_step - self.patience * self.every + 1
                self.stragglers[rank] = Straggler(rank, node, score, medians[index], reference, first, last_step)
                named.append(self.stragglers[rank])
        return named


def replay(timings: Sequence[Sequence[float]], *, every: int = 10, threshold: float = 0.75, patience: int = 3,
           nodes: Sequence[str] | None = None) -> list[Straggler]:
    """Whom detectors on every rank would name, in order, from each rank's step times (one
    sequence per rank, in rank order, all as long): times read back from a run, or made up."""
    board = Scoreboard([(rank, nodes[rank] if nodes else f"rank{rank}") for rank in range(len(timings))],
                       every=every, threshold=threshold, patience=patience)
    named: list[Straggler] = []
    for end in range(every, min(map(len, timings), default=0) + 1, every):
        medians = [interval_median([t for t in times[end - every:end] if usable(t)]) for times in timings]
        named += board.report(medians, last_step=end - 1)
    return named


class StragglerDetector:
    """Per-rank step times -> the slow rank and its node; see the module's documentation.

    Every rank of ``group`` (default: the whole job) must call :meth:`record` (or leave
    :meth:`timed`) once per step, as it calls the step's collectives: every ``every``-th call
    gathers."""

    def __init__(self, *, every: int = 10, threshold: float = 0.75, patience: int = 3,
                 group: dist.ProcessGroup | None = None, node: str | None = None) -> None:
        Scoreboard([], every=every, threshold=threshold, patience=patience)  # refuses bad settings now
        self.every, self.threshold, self.patience, self.group = every, threshold, patience, group
        self.node = node or node_name()
        self.steps = 0  # record() calls so far
        self._times: list[float] = []  # this interval's valid times
        self._board: Scoreboard | None = None  # made at the first report, with every rank's node
        self._started = 0.0
        self._gathered: tuple[torch.Tensor, list[torch.Tensor]] | None = None

    @property
    def stragglers(self) -> dict[int, Straggler]:
        """The ranks named and still below the threshold, by rank (the same on every rank)."""
        return self._board.stragglers if self._board is not None else {}

    @property
    def scores(self) -> list[float] | None:
        """Every rank's score at the last report (None before the first)."""
        return self._board.scores if self._board is not None else None

    # -- every step: no I/O, no collective --------------------------------------------------------
    def timed(self) -> StragglerDetector:
        """``with detector.timed():`` around this rank's own work of a step (a step that raises
        is not recorded: a report's collective must not start on one rank alone)."""
        return self

    def __enter__(self) -> StragglerDetector:
        self._started = time.perf_counter()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is None:
            self.record(time.perf_counter() - self._started)

    def record(self, seconds: float) -> list[Straggler]:
        """One step's time of this rank's own work; the stragglers named at this step's report
        (empty on every other step). A time that is not a finite number >= 0 is left out of the
        median, but the step still counts, so that every rank reports at the same step."""
        if usable(seconds):
            self._times.append(seconds)
        self.steps += 1
        if self.steps % self.every:
            return []
        return self._report()

    # -- every ``every`` steps: one all_gather of one float -----------------------------------------
    def _report(self) -> list[Straggler]:
        median = interval_median(self._times)
        self._times.clear()
        if not (dist.is_available() and dist.is_initialized()):
            return []
        medians = self._gather(median)
        if self._board is None:  # once: which rank is which node
            ranks: list[tuple[int, str] | None] = [None] * len(medians)
            dist.all_gather_object(ranks, (dist.get_rank(), self.node), group=self.group)
            self._board = Scoreboard([r for r in ranks if r is not None], every=self.every,
                                     threshold=self.threshold, patience=self.patience)
        named = self._board.report(medians, last_step=self.steps - 1)
        me = dist.get_rank()
        for straggler in named:
            if straggler.rank == me:
                log.warning("%s", straggler.line(self.threshold, self.patience))
        return named

    def _gather(self, median: float) -> list[float]:
        if self._gathered is None:
            world = dist.get_world_size(self.group)
            on_gpu = dist.get_backend(self.group) == "nccl"
            device = torch.device("cuda", torch.cuda.current_device()) if on_gpu else torch.device("cpu")
            self._gathered = (torch.zeros(1, dtype=torch.float64, device=device),
                              [torch.zeros(1, dtype=torch.float64, device=device) for _ in range(world)])
        mine, everyone = self._gathered
        mine.fill_(median)
        dist.all_gather(everyone, mine, group=self.group)
        return [float(t.item()) for t in everyone]
