"""Which failure lines are only the aftermath of another failure, and so draft nothing of their own.

When a rank dies of anything, the other ranks' collectives time out, it raises or aborts, and
torchrun reports that its child failed and tells the others to stop. The catalogue marks such
modes: ``downstream`` (usually a consequence: a collective timeout, an abort, a GPU that stopped
processing) and ``generic`` (catch-alls: a Python exception, torchrun's failed child, a hang).

The rule, per log:

- a line of a specific mode (neither) is a failure of its own, unless a failure of a mode that
  narrows it (``refines``) came just before: "failed to listen" after "Address already in use"
  is the port conflict said again, vaguely;
- a line that only passes an error on (NCCL's return trace, ``group.cc:64 -> 3``) is aftermath
  like a downstream line: a failure of its own only where no line near it says more;
- a downstream or generic line is the aftermath of a failure of another mode written before it
  in the same log, at most :data:`WINDOW` before when both lines have a time, or longer when the
  line says how long it waited (a watchdog's ``Timeout(ms)=1800000``: a rank that died half an
  hour before is what the collective waited for); a line that is itself aftermath explains nothing;
- it is also the aftermath of a specific failure written after it, at most :data:`WINDOW` after
  (:data:`AFTER_LINES` lines below, when a time is missing): torchrun stops the other ranks just
  before it reports the one that died;
- a line that says it is written as its process ends (CPython's resource_tracker: "leaked
  shared_memory objects to clean up at shutdown") reports what the end left behind: after a failure
  (seen, or waiting for its cause), it is that failure's aftermath and explains none of it; alone,
  it drafts like any line of its mode;
- a scheduler's stop ends the job's attempt (a mode marked ``ends_attempt``, a preemption; a line
  that says the job was cancelled or requeued): the lines of its unwinding, at most :data:`GRACE`
  after it (:data:`AFTER_LINES` lines below, when a time is missing), are the aftermath of it and of
  what came before it, as above; a line past them is a later attempt's, the aftermath of nothing
  before the stop, and a failure past them explains no line before the stop;
- anything else drafts like any failure (a Python exception with nothing before it is a bug).

Memory stays bounded: only the latest line of each mode is remembered, and aftermath lines wait
for a specific failure below them only as long as one could still come.
"""
from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from tooling.catalogue.modes import FailureMode, catalogue

if TYPE_CHECKING:
    from tooling.logs.drafts import Hit

WINDOW = timedelta(minutes=15)
SLACK = timedelta(minutes=5)  # beyond a stated wait: the survivors reach their next collective late
# how long a consequence says it waited: "Timeout(ms)=600000", "ran for 1800083 milliseconds"
_WAITED = re.compile(r"Timeout\(ms\)=(\d{1,10})|ran for (\d{1,10}) milliseconds|timeout of (\d{1,10}) ?ms", re.I)
AFTER_LINES = 100
# a stop's unwinding: Slurm kills what is left KillWait (30 s by default) after its SIGTERM, and the
# ranks it kills write their last lines meanwhile; a requeued attempt starts later (it waits for
# nodes, loads and sets up), so what comes past this is that attempt's
GRACE = timedelta(minutes=2)
# a scheduler's stop that no mode names: Slurm's "*** JOB 12 ON node7 CANCELLED AT 2024-05-01T10:00:00
# ***" (an operator's scancel, a failed step's), a requeue ("Requeued job 12", "DUE TO JOB REQUEUE")
_ENDS = re.compile(r"\bCANCELLED AT\b|\brequeu(?:ed|ing)\b|\bJOB REQUEUE\b", re.I)
MAX_WAITING = 1000  # aftermath lines waiting for a cause below them; older ones draft
# a line written as its process ends, about what the end left behind: "to clean up at shutdown",
# "on exit", "during interpreter shutdown", "while shutting down"
_TEARDOWN = re.compile(r"\b(?:at|on|during)(?: interpreter)? (?:shutdown|exit)\b|\bwhile shutting down\b", re.I)


def is_aftermath(mode: FailureMode) -> bool:
    return mode.generic or mode.downstream


def ends_attempt(hit: Hit) -> bool:
    """Whether a line says the scheduler stopped the job's attempt (see the module's docstring)."""
    mode = hit.recognition.mode
    return (mode is not None and mode.ends_attempt) or _ENDS.search(hit.message) is not None


def _window(message: str) -> timedelta:
    """How long before a consequence its cause may be: the wait the line states, if longer."""
    found = _WAITED.search(message)
    if found is None:
        return WINDOW
    waited = timedelta(milliseconds=int(next(g for g in found.groups() if g is not None)))
    return max(WINDOW, waited + SLACK)


def _at(hit: Hit) -> datetime | None:
    return hit.when.at if hit.when else None


@dataclass
class Aftermath:
    explained: int = 0  # lines taken as the aftermath of another failure
    _latest: dict[str, tuple[int, datetime | None]] = field(default_factory=dict)  # mode -> (Hit.seq, time)
    _waiting: deque[Hit] = field(default_factory=deque)
    _end: tuple[int, datetime | None] | None = None  # (Hit.seq, time) of the latest stop of an attempt

    def see(self, hit: Hit) -> list[Hit]:
        """The hits that are failures of their own, as far as is known by this one (in log order)."""
        mode = hit.recognition.mode
        assert mode is not None, "only recognised lines are hits"
        ready = self._expired(hit) + self._own(hit, mode)
        if ends_attempt(hit):  # (marked once it is read: the lines before it may explain it)
            self._end = (hit.seq, _at(hit))
        return ready

    def _own(self, hit: Hit, mode: FailureMode) -> list[Hit]:
        """``hit`` and the waiting lines it lets go, where it is a failure of its own."""
        if self._narrowed(hit, mode):  # "failed to listen" after "Address already in use": one failure
            self.explained += 1
            return []
        if self._teardown(hit, mode):
            self.explained += 1
            return []
        ready = []
        if not (is_aftermath(mode) or hit.echo):
            waiting = len(self._waiting)
            self._waiting = deque(w for w in self._waiting if not self._near(w, hit))
            self.explained += waiting - len(self._waiting)
            ready.append(hit)
        elif self._after_another(hit, mode):
            self.explained += 1
            return []  # explains nothing itself: a timeout's abort does not explain the timeout
        else:
            self._waiting.append(hit)
            if len(self._waiting) > MAX_WAITING:
                ready.append(self._waiting.popleft())
        self._latest[mode.id] = (hit.seq, _at(hit))
        return ready

    def finish(self) -> list[Hit]:
        """The end of a log: what still waits is a failure of its own."""
        ready = self.flush()
        self._latest.clear()
        self._end = None
        return ready

    def flush(self) -> list[Hit]:
        """What waits, as failures of their own, while the log goes on (tooling watch, at the end
        of each poll): the failures seen stay remembered, so later lines are still their aftermath."""
        ready = list(self._waiting)
        self._waiting.clear()
        return ready

    def _after_another(self, hit: Hit, mode: FailureMode) -> bool:
        at, window = _at(hit), _window(hit.message)
        # an echo repeats what any line before it said, of its own mode too
        return any((other != mode.id or hit.echo) and (at is None or then is None or abs(at - then) <= window)
                   and (self._end is None or line > self._end[0] or self._unwinding(hit))
                   for other, (line, then) in self._latest.items())

    def _teardown(self, hit: Hit, mode: FailureMode) -> bool:
        """Whether ``hit`` is written as its process ends, after a failure it is the aftermath of."""
        if _TEARDOWN.search(hit.message) is None:
            return False
        return any(self._near(waiting, hit) for waiting in self._waiting) or self._after_another(hit, mode)

    def _unwinding(self, hit: Hit) -> bool:
        """Whether ``hit`` is among the lines of the latest stop's unwinding (see GRACE)."""
        assert self._end is not None
        line, then = self._end
        at = _at(hit)
        if at is not None and then is not None:
            return abs(at - then) <= GRACE
        return hit.seq - line <= AFTER_LINES

    def _narrowed(self, hit: Hit, mode: FailureMode) -> bool:
        """Whether a failure of a mode that narrows this hit's was seen just before it."""
        if mode.id not in catalogue().refined:
            return False
        at = _at(hit)
        return any(catalogue().narrows(catalogue().by_id[other], mode)  # type: ignore[attr-defined]
                   and (at is None or then is None or abs(at - then) <= WINDOW) and hit.seq - line <= AFTER_LINES
                   for other, (line, then) in self._latest.items())

    def _near(self, waiting: Hit, cause: Hit) -> bool:
        if self._end is not None and waiting.seq < self._end[0] < cause.seq:
            return False  # the stop came between: a later attempt's failure explains nothing before it
        then, at = _at(waiting), _at(cause)
        if then is not None and at is not None:
            return abs(at - then) <= WINDOW
        return cause.seq - waiting.seq <= AFTER_LINES

    def _expired(self, hit: Hit) -> list[Hit]:
        """Waiting lines that no failure from here on could explain any more."""
        ready = []
        while self._waiting and not self._near(self._waiting[0], hit):
            ready.append(self._waiting.popleft())
        return ready
