"""The pre-flight of a multi-node job (``tooling preflight``), one task per node before training:
each reports its versions (:mod:`tooling.health.versions`), a tiny gloo all-reduce runs across
the tasks (:mod:`tooling.health.allreduce`), and a node that differs or fails is named
(:mod:`tooling.health.verdict`) before any GPU-hour is spent.

Rank 0 is the one voice: it holds the store (:mod:`tooling.health.rendezvous`), waits for every
rank's report at most the timeout, and posts the roster of those that came; every rank then
works from that one roster, so all reach the same verdict, and a rank that comes late takes no
part in an all-reduce the others gave up on. The same for the all-reduce's results. Each wait is
bounded by the timeout, so a task that never starts, dies or hangs costs the timeout, no more.

A fault of the node's hardware found on the way (nvidia-smi says a GPU is lost) drains the node
through the health check's path (``--drain``: its reason in :mod:`tooling.health.reason`'s form);
a version that differs is a software problem: named, never drained.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tooling.health.allreduce import Summed, all_reduce
from tooling.health.check import drain
from tooling.health.reason import SEPARATOR, entry
from tooling.health.rendezvous import Exchange, HostLost, Place, Unreachable
from tooling.health.versions import Report, code_version, gather


@dataclass(frozen=True)
class Settings:
    stand_ins: str | None  # an emulated node's stand-in folder; %N: the node's name
    code_dir: Path  # the job's working tree, whose git commit is the code's version
    code_version: str | None  # given instead
    fields: tuple[str, ...]  # the versions every node must hold alike
    pinned: dict[str, str]  # field -> the value every node must hold (--expect)
    timeout: float  # seconds for each wait: a source, the rendezvous, the reports, the all-reduce
    drain: bool


@dataclass(frozen=True)
class Outcome:
    place: Place
    settings: Settings
    reports: dict[int, Report]  # the roster: the ranks that reported in time
    sums: dict[int, Summed] = field(default_factory=dict)  # how the all-reduce ended on each rank
    reduced: bool = False  # the all-reduce was run (every rank reported)
    trouble: str | None = None  # this rank's own: it could not listen at or reach the store, or lost it
    trouble_kind: str = ""  # listen (rank 0) | reach | lost
    seconds: float = 0.0


def stand_in_folder(pattern: str | None, node: str) -> Path | None:
    return None if pattern is None else Path(pattern.replace("%N", node))


def run(where: Place, s: Settings) -> Outcome:
    started = time.monotonic()
    code = code_version(s.code_dir, node=where.node, given=s.code_version, timeout=s.timeout)
    mine = gather(where.node, where.rank, stand_ins=stand_in_folder(s.stand_ins, where.node), code=code,
                  timeout=s.timeout)
    if mine.hardware and s.drain:
        mine = _drained(mine, timeout=s.timeout)
    outcome = Outcome(where, s, {where.rank: mine})
    try:
        exchange = Exchange(where, timeout=s.timeout)
    except Unreachable as exc:
        return replace(outcome, trouble=str(exc), trouble_kind="listen" if where.rank == 0 else "reach",
                       seconds=time.monotonic() - started)
    try:
        outcome = _meet(exchange, mine, outcome)
    except HostLost as exc:
        outcome = replace(outcome, trouble=str(exc), trouble_kind="lost")
    return replace(outcome, seconds=time.monotonic() - started)


def _meet(exchange: Exchange, mine: Report, outcome: Outcome) -> Outcome:
    """Reports, roster, all-reduce, results: rank 0 collects and posts, the others read."""
    where, timeout = outcome.place, outcome.settings.timeout
    exchange.post("report", mine.as_json())
    if where.rank == 0:
        reports = {r: Report.from_json(d) for r, d in exchange.collect("report", seconds=timeout).items()}
        exchange.post("roster", {str(r): report.as_json() for r, report in reports.items()})
    else:  # rank 0 waits the timeout for the reports: twice that, then it is lost
        reports = {int(r): Report.from_json(d) for r, d in _from_rank_0(exchange, "roster", 2 * timeout).items()}
    outcome = replace(outcome, reports=reports)
    if len(reports) < where.world or where.rank not in reports:
        return _done(exchange, outcome)
    summed = all_reduce(exchange.store, where, timeout=timeout)
    exchange.post("sum", summed.as_json())
    if where.rank == 0:
        sums = {r: Summed.from_json(d) for r, d in exchange.collect("sum", seconds=timeout).items()}
        exchange.post("sums", {str(r): s.as_json() for r, s in sums.items()})
    else:
        sums = {int(r): Summed.from_json(d) for r, d in _from_rank_0(exchange, "sums", 2 * timeout).items()}
    return _done(exchange, replace(outcome, sums=sums, reduced=True))


def _from_rank_0(exchange: Exchange, kind: str, seconds: float) -> dict[str, Any]:
    """What rank 0 posted under ``kind``; its absence past ``seconds`` is the store lost."""
    found = exchange.collect(kind, seconds=seconds, ranks=[0])
    if not found:
        raise HostLost(f"no {kind} from rank 0 within {seconds:g} s")
    return dict(found[0])


def _done(exchange: Exchange, outcome: Outcome) -> Outcome:
    """Rank 0 holds the store until every rank of the roster has read what it needs from it."""
    exchange.post("done", {})
    if outcome.place.rank == 0:
        exchange.collect("done", seconds=outcome.settings.timeout, ranks=sorted(outcome.reports))
    return outcome


def _drained(report: Report, *, timeout: float) -> Report:
    """Drain the node for its hardware, as the health check drains: ``MODE EVIDENCE`` per fault."""
    reason = SEPARATOR.join(entry(h.mode, h.evidence, None) for h in report.hardware)
    error = drain(report.node, reason, timeout=timeout)
    return replace(report, drained=None if error else reason, drain_error=error)
