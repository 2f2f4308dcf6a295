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
MAX_WAITING = 1000  # aftermath lines waiting for a cause below them; older ones draft


def is_aftermath(mode: FailureMode) -> bool:
    return mode.generic or mode.downstream


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

    def see(self, hit: Hit) -> list[Hit]:
        """The hits that are failures of their own, as far as is known by this one (in log order)."""
        mode = hit.recognition.mode
        assert mode is not None, "only recognised lines are hits"
        ready = self._expired(hit)
        if self._narrowed(hit, mode):  # "failed to listen" after "Address already in use": one failure
            self.explained += 1
            return ready
        if not (is_aftermath(mode) or hit.echo):
            waiting = len(self._waiting)
            self._waiting = deque(w for w in self._waiting if not self._near(w, hit))
            self.explained += waiting - len(self._waiting)
            ready.append(hit)
        elif self._after_another(hit, mode):
            self.explained += 1
            return ready  # explains nothing itself: a timeout's abort does not explain the timeout
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
                   for other, (_, then) in self._latest.items())

    def _narrowed(self, hit: Hit, mode: FailureMode) -> bool:
        """Whether a failure of a mode that narrows this hit's was seen just before it."""
        if mode.id not in catalogue().refined:
            return False
        at = _at(hit)
        return any(catalogue().narrows(catalogue().by_id[other], mode)  # type: ignore[attr-defined]
                   and (at is None or then is None or abs(at - then) <= WINDOW) and hit.seq - line <= AFTER_LINES
                   for other, (line, then) in self._latest.items())

    def _near(self, waiting: Hit, cause: Hit) -> bool:
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
