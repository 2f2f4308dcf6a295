"""The watchdog's monitor: run a job, watch its ranks' heartbeats, and end the whole job.

The monitor is the parent of the job's launcher (torchrun, or a single python), on each node.
It polls the folder where every rank's :class:`tooling.resilience.Watchdog` beats: a rank whose
beat file has not changed for ``timeout`` seconds (by the monitor's own clock: no clock skew, no
file-time granularity) is silent; so is a rank that has not beaten once ``startup_timeout``
seconds after the job started, one that never registered, and one that said it was done but
is still alive ``timeout`` seconds later (stuck at exit). Polling is all it does while the job
runs: it shares no thread with a rank and waits on nothing a rank holds.

Ending the job: the monitor makes itself a child subreaper (``prctl``), so a rank orphaned
when its launcher dies is re-parented to the monitor instead of escaping to init, and then
SIGKILLs all its descendants, again and again, until none is left, reaping them as they die.
"""
from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from tooling.diagnose.rank_dumps import descendants
from tooling.resilience.watchdog import read_beat, rank_file

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1)  # passed on to the launcher


@dataclass
class _Rank:
    registration: dict[str, Any]
    raw: bytes = b""
    changed: float = 0.0  # monitor's monotonic clock when the beat file last changed
    done_seen: float | None = None


@dataclass(frozen=True)
class HeartbeatStall:
    """Why the monitor fired: each silent rank with its seconds of silence and last beat."""
    timeout: float
    silent: dict[int, float]
    missing: list[int] = field(default_factory=list)  # local ranks that never registered
    beats: dict[int, tuple[int, float] | None] = field(default_factory=dict)  # rank -> (step, wall time)
    registrations: list[dict[str, Any]] = field(default_factory=list)

    def describe(self) -> str:
        if not self.registrations:
            return "no rank registered with the watchdog before the startup timeout"
        parts = [f"rank {rank}: no beat for {seconds:.0f} s" + _last(self.beats.get(rank))
                 for rank, seconds in sorted(self.silent.items())]
        parts += [f"local rank {r}: never registered" for r in self.missing]
        return f"no progress (timeout {self.timeout:g} s): " + "; ".join(parts)

    def stopped_at(self) -> float | None:
        """Wall time of the newest beat of a silent rank: when progress stopped, or None."""
        times = [beat[1] for rank, beat in self.beats.items() if beat and rank in self.silent]
        return max(times) if times else None


def _last(beat: tuple[int, float] | None) -> str:
    return f" (last step {beat[0]})" if beat else " (never beat)"


class Heartbeats:
    """What the monitor knows of each rank, read from the watchdog folder at each poll."""

    def __init__(self, directory: Path, *, timeout: float, startup_timeout: float, started: float) -> None:
        self.directory, self.timeout, self.startup_timeout = directory, timeout, startup_timeout
        self.started = started
        self.ranks: dict[int, _Rank] = {}

    def poll(self, now: float) -> HeartbeatStall | None:
        self._register()
        silent = {rank: late for rank, state in self.ranks.items() if (late := self._silence(rank, state, now))}
        startup_over = now - self.started > self.startup_timeout
        missing = self._missing() if startup_over else []
        if silent or missing or (startup_over and not self.ranks):
            beats = {rank: read_beat(state.raw) for rank, state in self.ranks.items()}
            return HeartbeatStall(self.timeout, silent, missing, beats, self.registrations())
        return None

    def registrations(self) -> list[dict[str, Any]]:
        return [self.ranks[rank].registration for rank in sorted(self.ranks)]

    def _register(self) -> None:
        for path in self.directory.glob("rank-*.json"):
            try:
                registration = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # written atomically, so only a file that is not ours is unreadable
            self.ranks.setdefault(int(registration["rank"]), _Rank(registration))

    def _silence(self, rank: int, state: _Rank, now: float) -> float | None:
        """Seconds of silence past the limit that applies to the rank, else None."""
        if rank_file(self.directory, rank, "done").exists():
            state.done_seen = state.done_seen or now
            late = now - state.done_seen
            return late if late > self.timeout and _alive(state.registration["pid"]) else None
        try:
            raw = rank_file(self.directory, rank, "beat").read_bytes()
        except OSError:
            raw = b""
        if raw != state.raw:
            state.raw, state.changed = raw, now
        beaten = read_beat(state.raw) is not None
        since, limit = (state.changed, self.timeout) if beaten else (self.started, self.startup_timeout)
        return now - since if now - since > limit else None

    def _missing(self) -> list[int]:
        expected = max((r.registration.get("local_world_size", 1) for r in self.ranks.values()), default=0)
        present = {r.registration.get("local_rank") for r in self.ranks.values()}
        return [local for local in range(expected) if local not in present]


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for its parent."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def become_subreaper() -> bool:
    """Orphans of the job come to this process instead of init (Linux); False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


@contextmanager
def forwarding(job: subprocess.Popen[bytes]) -> Iterator[None]:
    """Signals to the monitor (scancel, Ctrl-C, SLURM's warning) go on to the launcher, so the
    job behaves under the watchdog as it does without it."""
    def forward(signum: int, _frame: Any) -> None:
        if job.poll() is None:
            job.send_signal(signum)
    previous = {signum: signal.signal(signum, forward) for signum in FORWARDED}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def supervise(command: list[str], *, heartbeats: Heartbeats, env: dict[str, str],
              poll: float) -> tuple[subprocess.Popen[bytes], HeartbeatStall | None]:
    """Start the job and watch it until it exits (no stall) or stalls (still running)."""
    become_subreaper()
    # its own process group: a Ctrl-C reaches only the monitor, which forwards it once
    job = subprocess.Popen(command, env=env, process_group=0)
    with forwarding(job):
        while job.poll() is None:
            stall = heartbeats.poll(time.monotonic())
            if stall is not None:
                return job, stall
            time.sleep(poll)
    return job, None


def end_job(*, grace: float = 10.0) -> tuple[list[int], list[int]]:
    """SIGKILL every descendant of this process until none is left, reaping them:
    (the pids killed, those still there after ``grace`` seconds, e.g. stuck in the kernel)."""
    killed: set[int] = set()
    deadline = time.monotonic() + grace
    while True:
        _reap()
        left = descendants(os.getpid())
        if not left or time.monotonic() > deadline:
            return sorted(killed), left
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except ProcessLookupError:
                pass
        time.sleep(0.02)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def exit_code(job: subprocess.Popen[bytes]) -> int:
    """The launcher's exit code as a shell reports it (128 + n when a signal ended it)."""
    code = job.returncode if job.returncode is not None else 1
    return 128 - code if code < 0 else code
