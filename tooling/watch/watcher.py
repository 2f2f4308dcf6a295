"""The poll loop of ``tooling watch``: read every log, check for a stall, file what was found, save.

One poll reads each log from where the last stopped (at most a budget per file), raises a hang
when progress stopped (:class:`tooling.watch.progress.Stall`), files its failures
(:mod:`tooling.watch.occurrences`) and saves the offsets; when it found something, its offsets
and failures are saved first, as a journal (:mod:`tooling.watch.state`), and the failures are
filed under the poll's mark: a watch stopped anywhere, even by SIGKILL, files at its next start
what its last poll had not, and resumes exactly after that poll. ``once`` polls until every log is read to its end now
and returns; otherwise it polls every ``interval`` seconds until SIGTERM, SIGINT or SIGHUP, which
end it after the poll at hand, offsets saved, with 128 + the signal's number (as ``tooling
serve``). Time is the command's clock (``--now`` moves it), advancing with a monotonic clock.
"""
from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Any, Callable, Iterator

from tooling.errors import UserError
from tooling.logs.drafts import Draft
from tooling.records.clock import ahead, span
from tooling.records.layout import path_of
from tooling.records.load import load_file
from tooling.records.model import parse_time, record_time
from tooling.records.runs import has_ended, stall_minutes, stalled
from tooling.watch.counted import Counted
from tooling.watch.known import KnownIncidents
from tooling.watch.logs import FollowedLog
from tooling.watch.occurrences import Found, Mark, Outcome, failures_of, file_found
from tooling.watch.progress import Progress, hang_json, hang_values, minutes_text
from tooling.watch.state import LogOffsets, Pending, WatchState, save
from tooling.writers.filing import as_json, values_for

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
BY = "tooling watch"
RULE_EVERY = timedelta(minutes=1)


@dataclass(frozen=True)
class Threshold:
    minutes: float
    source: str  # where the minutes came from, for the hang's notes
    going: bool  # False: the run record says the run ended (no progress is expected)
    beat_ahead: str | None = None  # the run record's heartbeat, when it is ahead of now (a fast clock)
    notice: str | None = None  # what the person running the watch is told of that heartbeat


@dataclass(frozen=True)
class StallRule:
    """How long without progress is a hang: --stall-after, else the run record's
    feed.stall_after_minutes, else the default (the rule and its default are
    :mod:`tooling.records.runs`'s). The run record is read again at most once a minute, so that
    a changed threshold, an ended run or a recent heartbeat of the training loop
    (feed.heartbeat_at: it reports progress its log may not show) counts. A heartbeat ahead of
    now (the clock of the node that wrote it runs fast) says nothing of when progress was made:
    it is said, and the logs' progress lines, seen by this watch's clock, are all that counts."""
    root: Path
    run: str | None
    flag: float | None

    def read(self, now: datetime) -> Threshold:
        data: dict[str, Any] = {}
        if self.run is not None:
            loaded = load_file(str(path_of(self.root, self.run, kinds=["run"])))
            if loaded.findings:
                raise UserError(f"the run record does not load: {loaded.findings[0].format()}")
            data = loaded.data if isinstance(loaded.data, dict) else {}
        feed = data.get("feed") if isinstance(data.get("feed"), dict) else {}
        assert isinstance(feed, dict)
        going = not has_ended(data)
        recorded, set_by_record = stall_minutes(data)
        if self.flag is not None:
            minutes, source = self.flag, "--stall-after"
        elif set_by_record:
            minutes, source = recorded, f"feed.stall_after_minutes of run {self.run}"
        else:
            minutes, source = recorded, "the default"
        beat = parse_time(str(feed.get("heartbeat_at"))) if feed.get("heartbeat_at") else None
        skew = ahead(beat, now) if beat is not None else None
        recent = beat is not None and skew is None and not stalled(now - beat, minutes)
        if skew is None:
            return Threshold(minutes, source, going and not recent)
        notice = (f"run {self.run}: feed.heartbeat_at {feed['heartbeat_at']} is {span(skew)} ahead of this clock "
                  f"({record_time(now)}): the clock of the node that wrote it runs fast; "
                  "not taken as progress, only the logs' progress lines count")
        return Threshold(minutes, source, going, str(feed["heartbeat_at"]), notice)


def taken(log: FollowedLog, *, settled: bool) -> list[Draft]:
    """The failures a poll of ``log`` read (``settled``: lines that wait for a cause below them
    too, see DraftBook.take), but for lines that only go on with an occurrence filed already."""
    return [draft for draft in log.book.take(settled=settled) if draft.occurrences]


def to_file(draft: Draft, where: dict[str, Any]) -> Found:
    """A failure read, to file ``where``, with where its occurrences start in its log (by its
    absolute path: another watch of it may have counted them)."""
    counted = {os.path.abspath(log): Counted(draft.occurrences, tuple(draft.starts)) for log in draft.logs} \
        if len(draft.logs) == 1 else {}
    return Found(values_for(draft, where, by=BY), draft.occurrences, as_json(draft), counted)


class Watcher:
    def __init__(self, *, root: Path, logs: list[Path], where: dict[str, Any], state: WatchState,
                 rule: StallRule, clock: Callable[[], datetime], emit: Callable[[Outcome], None],
                 once: bool = False) -> None:
        self.root, self.where, self.state, self.rule, self.clock, self.emit = root, where, state, rule, clock, emit
        self.incidents = KnownIncidents(root)  # read once, then again only where a file changed
        self.once = once  # each poll that reads a log to its end now is its last
        self._threshold: tuple[datetime, Threshold] | None = None  # when read, what
        self._notices: list[str] = []
        self._said_ahead: str | None = None  # the heartbeat ahead of now last said, said once
        self.logs = []
        for path in logs:
            saved = state.logs.get(str(path.absolute()), LogOffsets())
            self.logs.append(FollowedLog(path, saved=saved.files, lines=saved.lines, seen=saved.seen,
                                         beside=saved.beside))

    def poll(self, path: Path) -> bool:
        """One poll, its offsets saved at ``path``; True when some log has more to read right away."""
        now = self.clock()
        if self.state.pending is not None:  # the last watch was killed while filing: file the rest first
            self._file(path, now)
        more, found = False, []
        for log in self.logs:
            behind = log.poll(now=now)
            more = behind or more
            settled = not behind and (self.once or log.settled())
            found += [to_file(draft, self.where) for draft in taken(log, settled=settled)]
            if log.progress is not None:  # (to the second, as records say times: the stall's clock too)
                self.state.stall.saw(Progress(now.replace(microsecond=0), log.name, *log.progress))
        found += self._check_stall(now)
        for log in self.logs:
            self.state.logs[str(log.path.absolute())] = LogOffsets(log.positions(), log.lines, log.book.seen,
                                                                   log.beside)
        failures = failures_of(found)
        if failures:
            self.state.polls += 1
            self.state.pending = Pending(self.state.polls, failures)
            save(path, self.state)  # the journal: one more small write for a poll that files something
            self._file(path, now)
        else:
            save(path, self.state)
        return more

    def _file(self, path: Path, now: datetime) -> None:
        """File the journal's failures (those no incident has the mark of yet), then clear it."""
        pending = self.state.pending
        assert pending is not None
        for outcome in file_found(pending.failures, root=self.root, now=now, mark=Mark(self.state.id, pending.poll),
                                  incidents=self.incidents):
            self.emit(outcome)
        self.state.pending = None
        save(path, self.state)

    def _check_stall(self, now: datetime) -> list[Found]:
        """The hang to file, once per stall."""
        stall = self.state.stall
        if stall.last is None or stall.raised:
            return []
        if self._threshold is None or abs(now - self._threshold[0]) >= RULE_EVERY:
            self._threshold = (now, self.rule.read(now))
        threshold = self._threshold[1]
        if threshold.notice is not None and threshold.beat_ahead != self._said_ahead:
            self._said_ahead = threshold.beat_ahead
            self._notices.append(threshold.notice)
        if not threshold.going or not stall.due(now, threshold.minutes):
            return []
        values = hang_values(stall.last, now=now, minutes=threshold.minutes, source=threshold.source,
                             logs=[log.name for log in self.logs], where=self.where)
        stall.raised = True
        return [Found(values, 1, hang_json(stall.last, values, threshold.minutes))]

    def notices(self) -> list[str]:
        said = [*self._notices, *(n for log in self.logs for n in log.notices)]
        self._notices.clear()
        for log in self.logs:
            log.notices.clear()
        return said

    def close(self) -> None:
        for log in self.logs:
            log.close()
        self.incidents.close()


def loop(watcher: Watcher, state_path: Path, *, once: bool, interval: float,
         notice: Callable[[str], None]) -> int:
    """Poll until the logs are read (``once``) or a stop signal; 0, or 128 + the signal."""
    with _stop_signals() as stopped:
        try:
            while True:
                more = watcher.poll(state_path)
                for line in watcher.notices():
                    notice(line)
                if stopped.signum is not None:
                    return 128 + stopped.signum
                if once and not more:
                    return 0
                if not more:
                    stopped.wait(interval)
        finally:
            watcher.close()


class _Stopped(threading.Event):
    signum: int | None = None


@contextmanager
def _stop_signals() -> Iterator[_Stopped]:
    """A stop signal ends the loop after the poll at hand, not in the middle of a write."""
    stopped = _Stopped()

    def handle(signum: int, frame: FrameType | None) -> None:
        stopped.signum = stopped.signum or signum
        stopped.set()

    previous = {signum: signal.signal(signum, handle) for signum in STOP_SIGNALS}
    try:
        yield stopped
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def stall_text(threshold: Threshold) -> str:
    return f"a hang after {minutes_text(threshold.minutes)} without progress ({threshold.source})"
