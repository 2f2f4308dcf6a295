"""The signals ``tooling job`` receives: caught from its first moments, each stamped as it arrives.

The scheduler may signal the wrapper at any time: USR1 before the time limit (``--signal=B:USR1@N``),
TERM on scancel or preemption, often many at once (a signal storm). So the handler is
installed before anything slow (the record's modules, the start event's write) and does only what
cannot wait: it notes the signal with the time it arrived and passes it on to the trainer. The
writing comes later, in batches (:func:`signal_events`): a storm of 100 USR1 is one event with its
count, never 100 locked writes of the run record.

A signal that came before the trainer existed is passed on once the trainer catches it (or
ignores it), as ``/proc/PID/status`` says, so a trainer still starting up is not killed by a
warning it installs a handler for a moment later; after :data:`READY_SECONDS` it is passed on
regardless. Standard library only (and :mod:`tooling.now`, the command's clock, which is too):
this module is imported before the heavy ones.
"""
from __future__ import annotations

import itertools
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import Any

from tooling.now import local_now

FORWARDED = (signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
READY_SECONDS = 10.0  # how long a signal that came before the trainer waits for its handler
GLOBAL_OPTIONS = ("--root", "--now")  # options of `tooling` itself, each with a value, before its command


@dataclass
class Arrival:
    name: str  # USR1, TERM, ...
    at: datetime  # when it arrived
    passed: bool  # passed on to the trainer


class Catcher:
    """Catches :data:`FORWARDED` while installed; ``arrived`` grows in arrival order."""

    def __init__(self, clock: Callable[[], datetime]) -> None:
        self.clock = clock
        self.arrived: list[Arrival] = []
        self.child: subprocess.Popen[bytes] | None = None
        self._since = 0.0  # when the child was started (monotonic)
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        if not self._previous:  # installed once: a second time would keep its own handler as the one to restore
            self._previous = {sig: signal.signal(sig, self._handle) for sig in FORWARDED}

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}

    def retire(self) -> None:
        """The trainer has ended and this process, ``tooling job`` itself, is about to exit: a late
        signal (a second USR1: scancel may deliver one twice on a loaded controller) is ignored, as
        its default action would end the wrapper by that signal and the job FAILED after its end
        was written."""
        self._previous = {}
        for sig in FORWARDED:
            signal.signal(sig, signal.SIG_IGN)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        # a signal handler: runs between two bytecodes of the main thread, so it takes no lock
        child = self.child
        self.arrived.append(Arrival(signal.Signals(signum).name.removeprefix("SIG"), self.clock(), child is not None))
        if child is not None:
            _send(child, signum)

    def started(self, child: subprocess.Popen[bytes]) -> None:
        """The trainer runs: signals from now on go to it as they arrive."""
        self._since = time.monotonic()
        self.child = child
        self.pass_waiting()

    def pass_waiting(self) -> None:
        """Pass on the signals that came before the trainer, each once it is ready for it."""
        child = self.child
        if child is None:
            return
        late = time.monotonic() - self._since >= READY_SECONDS
        for arrival in [a for a in self.arrived if not a.passed]:
            signum = signal.Signals[f"SIG{arrival.name}"]
            if late or handled(child.pid, signum) is not False:
                arrival.passed = True
                _send(child, signum)

    def names(self) -> set[str]:
        return {a.name for a in self.arrived}


EARLY: Catcher | None = None  # installed by catch_early when this process is `tooling job ... -- TRAINER`


def catch_early(argv: list[str]) -> None:
    """Catch the job's signals at once when ``argv`` (``sys.argv``) runs ``tooling job`` around a
    trainer: called by :mod:`tooling.main` before its own imports, the slow part of starting up."""
    global EARLY
    if EARLY is None and wraps_a_trainer(argv):
        EARLY = Catcher(local_now)
        EARLY.install()


def wraps_a_trainer(argv: list[str]) -> bool:
    """Whether ``argv`` is ``tooling [--root R] [--now T] job RUN ... -- TRAINER`` (not a hook)."""
    program = Path(argv[0]) if argv else Path()
    if "tooling" not in (program.name, program.parent.name):  # `tooling`, `python -m tooling`
        return False
    own = argv[1:argv.index("--")] if "--" in argv else argv[1:]
    words = iter(own)
    for word in words:
        if word in GLOBAL_OPTIONS:
            next(words, None)
        elif not word.startswith(tuple(f"{option}=" for option in GLOBAL_OPTIONS)):
            return word == "job" and "--prolog" not in own and "--epilog" not in own
    return False


def _send(child: subprocess.Popen[bytes], signum: int) -> None:
    try:
        child.send_signal(signum)
    except ProcessLookupError:  # it has already exited
        pass


def handled(pid: int, signum: int) -> bool | None:
    """Whether process ``pid`` catches or ignores ``signum`` now; None where /proc cannot say."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return None
    masks = {k: int(v, 16) for k, _, v in (line.partition(":\t") for line in lines) if k in ("SigCgt", "SigIgn")}
    if len(masks) < 2:
        return None
    return bool((masks["SigCgt"] | masks["SigIgn"]) >> (signum - 1) & 1)


def signal_events(arrivals: list[Arrival], time_text: Callable[[datetime], str]) -> Iterator[dict[str, Any]]:
    """``signal`` events of ``arrivals``: each run of the same signal is one event, at its first
    arrival, with how many and the last one's time in its detail."""
    for name, run in itertools.groupby(arrivals, key=lambda a: a.name):
        same = list(run)
        detail = f"{len(same)} times, the last at {time_text(same[-1].at)}" if len(same) > 1 else None
        yield {"kind": "signal", "signal": name, "at": same[0].at, "detail": detail}
