"""The hang watchdog, rank side: a heartbeat from the training loop, and a way in for the monitor.

A hung job burns GPU time silently: every rank waits in a collective for the one that stopped,
and nothing fails until the collective timeout (30 minutes by default), if ever. The watchdog
has two halves, on one node:

- in each rank, :class:`Watchdog` (this module, liftable alone): ``watchdog.beat(step)`` once
  per step stores a counter, the step and the time in a small file the rank has mapped into its
  memory (no system call: a beat costs well under a microsecond). It also registers the rank (pid, host, main thread) and opens two ways in that
  still work while the rank's main thread is stuck: ``faulthandler`` on a signal (a C-level
  handler: it writes every thread's Python stack to a file without waiting for the main
  thread), and PyTorch's worker server on a Unix socket, which serves the collective flight
  recorder (``fr_trace_json``) from a C++ thread.
- above the job, the monitor: ``tooling watchdog --run RUN -- torchrun ... train.py``. It is
  the parent of the launcher, so it never shares a thread with a stuck rank, may ptrace its
  descendants even where Yama restricts ptrace to ancestors, and its exit code is the job's.
  When some rank has not beaten for ``--timeout`` seconds it dumps every rank's stack (py-spy,
  else this module's faulthandler), fetches the flight recorders, drafts a hang incident next
  to the dumps, kills every process of the job and exits with :data:`EXIT_HANG`.

Files, one set per rank in the folder the monitor names in ``TOOLING_WATCHDOG_DIR``:
``rank-N.json`` (registration), ``rank-N.beat`` (beat count, step, time: shared memory),
``rank-N.stacks.txt`` (faulthandler's output), ``rank-N.sock`` (the worker server),
``rank-N.done`` (the rank finished; it is no longer expected to beat).

Without ``TOOLING_WATCHDOG_DIR`` (not run under the monitor) :meth:`Watchdog.from_env` returns
an inert watchdog whose ``beat`` does nothing, so a loop can call it unconditionally.
"""
from __future__ import annotations

import faulthandler
import json
import mmap
import os
import signal
import socket
import struct
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from tooling.fs.atomic import replace_file

# EX_TEMPFAIL of sysexits.h, "try again later": the job hung and was ended on purpose, so an
# auto-resume wrapper should restart it from its last checkpoint (not 1, a crash; not 128+n, a
# signal; not 124, timeout(1)).
EXIT_HANG = 75
ENV_DIR = "TOOLING_WATCHDOG_DIR"
ENV_FR = "TORCH_FR_BUFFER_SIZE"  # collectives torch's flight recorder keeps (0: it records none)
MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to 107 bytes


def rank_file(directory: Path, rank: int, suffix: str) -> Path:
    """``rank-N.<suffix>``: json, beat, stacks.txt, sock or done."""
    return directory / f"rank-{rank}.{suffix}"


BEAT = struct.Struct("<qqd")  # beats so far, last step, wall time of the last beat


def read_beat(raw: bytes) -> tuple[int, float] | None:
    """(step, wall time) of the last beat in a beat file's bytes; None before the first beat.
    A read that crosses a beat may mix two beats: it still differs from the last read, which is
    all the monitor needs to see progress."""
    if len(raw) < BEAT.size:
        return None
    count, step, at = BEAT.unpack_from(raw)
    return (step, at) if count > 0 else None


class Watchdog:
    """Heartbeat of one rank; see the module's documentation for the whole picture.

    Create it early (before ``init_process_group``, so a stuck rendezvous is seen too), call
    :meth:`beat` every step and :meth:`close` (or use ``with``) when the rank is done.
    """

    def __init__(self, directory: str | Path | None, *, rank: int | None = None,
                 dump_signal: int = signal.SIGUSR2, flight_recorder: bool = True) -> None:
        self.directory = Path(directory).absolute() if directory is not None else None
        self.rank = int(os.environ.get("RANK", "0")) if rank is None else rank
        self._beats = 0
        self._map: mmap.mmap | None = None  # None: inert, beat() returns at once
        self._stacks: Any = None
        self._server: Any = None
        if self.directory is not None:
            self._start(self.directory, dump_signal, flight_recorder)

    @classmethod
    def from_env(cls, *, required: bool = False, **options: Any) -> "Watchdog":
        """The watchdog the monitor asked for through the environment; inert without one."""
        directory = os.environ.get(ENV_DIR)
        if required and not directory:
            raise RuntimeError(f"{ENV_DIR} is not set: run the job under the monitor, "
                               "tooling watchdog --run RUN -- torchrun ...")
        return cls(directory or None, **options)

    @property
    def active(self) -> bool:
        return self.directory is not None

    def beat(self, step: int) -> None:
        """The loop made progress: a store into shared memory, no system call."""
        if self._map is None:
            return
        self._beats += 1
        BEAT.pack_into(self._map, 0, self._beats, step, time.time())

    def close(self) -> None:
        """The rank is done: the monitor stops expecting beats from it."""
        if self.directory is None:
            return
        rank_file(self.directory, self.rank, "done").touch()
        if self._server is not None:
            self._server.shutdown()
            self._server = None
        if self._map is not None:
            self._map.close()
            self._map = None

    def __enter__(self) -> "Watchdog":
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _start(self, directory: Path, dump_signal: int, flight_recorder: bool) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        # faulthandler keeps the file's descriptor and writes to it from the signal handler
        self._stacks = open(rank_file(directory, self.rank, "stacks.txt"), "a", encoding="utf-8")
        faulthandler.register(dump_signal, file=self._stacks, all_threads=True, chain=False)
        socket_path, recorder = self._flight_recorder(directory) if flight_recorder else (None, "disabled")
        fd = os.open(rank_file(directory, self.rank, "beat"), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.ftruncate(fd, BEAT.size)  # zeros: no beat yet
            self._map = mmap.mmap(fd, BEAT.size)  # shared: the monitor's reads see each store
        finally:
            os.close(fd)
        registration = {
            "rank": self.rank, "local_rank": int(os.environ.get("LOCAL_RANK", self.rank)),
            "local_world_size": int(os.environ.get("LOCAL_WORLD_SIZE", "1")), "pid": os.getpid(),
            "host": socket.gethostname(), "signal": int(dump_signal), "main_thread": threading.main_thread().ident,
            "stacks": self._stacks.name, "socket": socket_path, "flight_recorder": recorder,
        }
        replace_file(rank_file(directory, self.rank, "json"), json.dumps(registration, indent=1) + "\n")

    def _flight_recorder(self, directory: Path) -> tuple[str | None, str]:
        """Start torch's worker server, whose C++ thread serves the flight recorder even while
        the main thread is stuck. The recorder itself is on only if TORCH_FR_BUFFER_SIZE was set
        before init_process_group (the monitor sets it for the job)."""
        path = str(rank_file(directory, self.rank, "sock"))
        if len(path) > MAX_SOCKET_PATH:
            return None, f"not served: socket path longer than {MAX_SOCKET_PATH} bytes ({path})"
        try:
            from torch._C._distributed_c10d import _WorkerServer
        except ImportError as exc:
            return None, f"not served: torch.distributed is not available ({exc})"
        self._server = _WorkerServer(path)
        size = os.environ.get(ENV_FR, "0")
        return path, f"{ENV_FR}={size}" + ("" if size.strip() not in ("", "0") else " (records nothing)")
