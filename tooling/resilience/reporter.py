"""The run reporter: the training loop keeps its run record up to date, without ever waiting for it.

    reporter = RunReporter("demo-7b", root="/path/to/playbook", checkpoints=manager)
    with reporter:
        for step in ...:
            ...
            reporter.step(step, loss=loss, tokens=tokens_seen)

:meth:`RunReporter.step` only stores the step's values (the loss tensor detached, never read)
and, once per ``every`` seconds (default a minute), wakes a daemon thread. That thread writes
``progress``, ``feed.heartbeat_at``, one ``feed.samples`` item and, with ``checkpoints=``, the
newest checkpoint of the :class:`~tooling.resilience.checkpoint.CheckpointManager`'s manifest
that verifies (re-read once, by its CRC-32, in the thread) as ``last_good_checkpoint`` (of a
:class:`~tooling.resilience.distributed_checkpoint.DistributedCheckpointManager`'s: the newest step
folder whose every shard verifies). The
thread hands the step's numbers to a writer process (:mod:`tooling.resilience.record_writer`
starts ``python -m tooling.writers.feed_server``), which words them as ``tooling report`` does
and writes them through :func:`tooling.writers.feed_writes.feed_run`: locked, re-read, only the
machine fields, so a person's edit of the same file is never lost. Its YAML work would hold the
GIL for a good part of a second, and this package imports nothing of the records: it lifts into a
training loop alone. In an environment without the package's ``wiki`` extra, the writer process is
another environment's ``tooling report --serve``: ``tooling=`` (or ``$TOOLING_EXECUTABLE``) names it,
else the first ``tooling`` on PATH that is not this environment's. ``close()`` (or leaving the
``with``) writes the last values.

It never stalls or crashes training: a slow, long-locked or unwritable repository only delays
the thread; a failed write is logged (``logging``, logger ``tooling.resilience.reporter``) once
per kind of failure and the next write tries again; ``close`` waits at most ``timeout`` seconds.

Under ``torch.distributed`` (or torchrun's ``RANK``) only rank 0 reports: on every other rank
the reporter does nothing, so every rank can call it alike.
"""
from __future__ import annotations

import logging
import math
import os
import re
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from tooling.resilience.record_writer import RecordWriter

log = logging.getLogger(__name__)
Values = tuple[int, Any, Any, Any, float]  # step, loss, tokens, tokens_per_s, time.time()


def rank() -> int:
    """This process's rank: torch.distributed's once initialised, else torchrun's RANK, else 0."""
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        return int(dist.get_rank())
    return int(os.environ.get("RANK", "0") or 0)


class RunReporter:
    """Report a training loop's progress into ``runbooks/runs/<run_id>.yaml`` under ``root``
    (default: the repository above the working folder), at most once per ``every`` seconds;
    ``sample_every``: seconds per ``feed.samples`` item (default: the feed's, half an hour);
    ``tooling``: the ``tooling`` executable that writes the record (default: see the module's docstring)."""

    def __init__(self, run_id: str, *, root: str | Path | None = None, every: float = 60.0,
                 sample_every: float | None = None, checkpoints: Any = None, total_steps: int | None = None,
                 lock_timeout: float = 30.0, tooling: str | Path | None = None) -> None:
        self.run_id, self.every, self.sample_every = run_id, every, sample_every
        self.root = Path(root) if root is not None else None  # None: found by the writer, above ``start``
        self.start = Path.cwd()
        self.checkpoints, self.total_steps, self.lock_timeout = checkpoints, total_steps, lock_timeout
        self.active = rank() == 0
        self.writes = 0  # successful writes so far, for tests and the curious
        self._latest: Values | None = None
        self._due = 0.0  # time.monotonic() of the next write: the first step writes at once
        self._wake, self._done = threading.Event(), threading.Condition()
        self._asked = self._served = 0  # flush requests, and how many the thread has served
        self._closing = False
        self._thread: threading.Thread | None = None
        self._written: Values | None = None  # the values of the last write that succeeded
        self._checkpoint: tuple[int, str] | None = None  # (step, file) last verified
        self._written_checkpoint: dict[str, Any] | None = None  # the checkpoint of the last write
        self._failures: set[str] = set()
        self._writer = RecordWriter(str(tooling) if tooling is not None else None)

    # -- the training thread's side: constant time, no I/O ------------------------------------
    def step(self, step: int, *, loss: Any = None, tokens: Any = None, tokens_per_s: Any = None) -> None:
        """Note the values of ``step``; ``loss`` may be a tensor (read in the writer thread)."""
        if not self.active:
            return
        if loss is not None and hasattr(loss, "detach"):
            loss = loss.detach()  # holds the value, not the autograd graph
        self._latest = (step, loss, tokens, tokens_per_s, time.time())
        now = time.monotonic()
        if now >= self._due:
            self._due = now + self.every
            self._kick()

    def flush(self, timeout: float = 30.0) -> bool:
        """Write the latest values now; True once written (False: failed or still waiting)."""
        if not self.active:
            return True
        with self._done:
            self._asked += 1
            wanted = self._asked
        self._kick()
        with self._done:
            self._done.wait_for(lambda: self._served >= wanted, timeout=timeout)
            return self._served >= wanted and self._written is self._latest

    def close(self, timeout: float = 30.0) -> None:
        """Write the last values, waiting at most ``timeout`` seconds; then stop the thread."""
        if not self.active or self._thread is None:
            return
        self._closing = True
        self._wake.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._warn("close", f"the last write of run {self.run_id} did not finish within {timeout:g} s; "
                                "left to the daemon thread")

    def __enter__(self) -> RunReporter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _kick(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name=f"run-reporter-{self.run_id}", daemon=True)
            self._thread.start()
        self._wake.set()

    # -- the writer thread ----------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            with self._done:
                asked = self._asked
            closing = self._closing
            self._write()
            if closing:
                self._writer.close(timeout=10.0)
            with self._done:
                self._served = asked
                self._done.notify_all()
            if closing:
                return

    def _write(self) -> None:
        latest = self._latest
        if latest is None:
            return
        checkpoint = self._newest_checkpoint()
        # the same step again is written when a checkpoint came since: a loop saves its last step
        # after the step's periodic write, then closes (lab 1 read 400 steps and checkpoint 380)
        if latest is self._written and checkpoint == self._written_checkpoint:
            return
        try:
            error = self._writer.write({
                "root": str(self.root) if self.root is not None else None, "start": str(self.start),
                "run": self.run_id, "now": _iso(datetime.now()), "step": self._step(latest),
                "checkpoint": checkpoint, "sample_every": self.sample_every,
                "lock_timeout": self.lock_timeout})
        except Exception as exc:  # whatever it is, training goes on
            error = f"{type(exc).__name__}: {exc}"
        if error is not None:  # said once per kind, tried again at the next write
            where = self.root if self.root is not None else f"the repository above {self.start}"
            self._warn(re.sub(r"[0-9]+", "N", error)[:160], f"could not write run record {self.run_id} under "
                                                           f"{where} (training goes on; said once): {error}")
            return
        self._written, self._written_checkpoint = latest, checkpoint
        self.writes += 1

    def _step(self, latest: Values) -> dict[str, Any]:
        """The step's numbers, read here (off the training thread); the writer words them."""
        step, loss, tokens, rate, at = latest
        rate = _number(rate)
        if rate is None and self._written is not None and tokens is not None and self._written[2] is not None:
            seconds = at - self._written[4]  # tokens per second since the last write
            rate = (_number(tokens) - _number(self._written[2])) / seconds if seconds > 0 else None  # type: ignore[operator]
        return {"step": int(step), "total_steps": self.total_steps, "loss": _number(loss),
                "tokens": _number(tokens), "tokens_per_s": rate, "at": _iso(datetime.fromtimestamp(at))}

    def _newest_checkpoint(self) -> dict[str, Any] | None:
        """The newest manifest entry that verifies; each entry is verified once."""
        manager = self.checkpoints
        if manager is None:
            return None
        for entry in reversed(manager.entries):
            name = _stored(entry)
            path = Path(manager.directory).resolve() / name
            try:
                if (entry.step, name) == self._checkpoint or manager.verify(entry):
                    saved = _iso(datetime.fromtimestamp(path.stat().st_mtime))
                    self._checkpoint = (entry.step, name)
                    return {"step": entry.step, "path": str(path), "saved_at": saved, "verified": True}
            except FileNotFoundError:  # rotated away since the manifest was read: an older one then
                continue
        return None

    def _warn(self, kind: str, message: str) -> None:
        if kind not in self._failures:
            self._failures.add(kind)
            log.warning("run reporter: %s", message)


def _stored(entry: Any) -> str:
    """Where a manifest entry lives in its manager's folder: a file of CheckpointManager's, or
    the step folder of DistributedCheckpointManager's (sharded state: every rank's files)."""
    return str(getattr(entry, "file", None) or entry.folder)


def _iso(moment: datetime) -> str:
    """A local time to the second, with its offset, as the record writes times."""
    return moment.astimezone().replace(microsecond=0).isoformat()


def _number(value: Any) -> float | None:
    """A finite float from a number or a one-element tensor (read here, off the training thread)."""
    if value is None:
        return None
    number = float(value.item() if hasattr(value, "item") else value)
    return number if math.isfinite(number) else None
