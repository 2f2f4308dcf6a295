"""Work done aside, in a forked process, while this one goes on with the rest of an analysis.

Over 100,000 incidents, the likely repeats by wording (tooling.analysis.similarity) and the
automation candidates (tooling.analysis.candidates) each take a second or two, and neither needs
the other: on a machine of two cores, one runs in a child forked with everything read so far
(nothing pickled on the way in; only the result comes back), and the command waits for the
longer of the two instead of their sum.

Only where it is worth a process and safe: a large enough analysis, ``fork`` available, and no
other thread in this process (a fork copies only the thread that forked; a lock another thread
held would stay locked in the child). Otherwise, and when the child dies, the work runs here,
so the answer never depends on where it was made.
"""
from __future__ import annotations

import os
import pickle
import signal
import threading
from contextlib import contextmanager, suppress
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")


def forkable() -> bool:
    return hasattr(os, "fork") and threading.active_count() == 1


@contextmanager
def aside(work: Callable[[], T], *, worth: bool) -> Iterator[Callable[[], T]]:
    """A function that gives ``work()``: made by a child forked on entering, when ``worth`` it and
    :func:`forkable`, else here when first asked. A child not asked for its result is ended on leaving."""
    if not (worth and forkable()):
        yield work
        return
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        _child(work, read, write)
    os.close(write)
    made: list[T] = []

    def result() -> T:
        if not made:
            with open(read, "rb") as pipe:
                data = pipe.read()
            status = os.waitpid(pid, 0)[1]
            # a child that failed (the work raised, or it was killed): the same work here, which
            # raises here what it raised there
            made.append(pickle.loads(data) if status == 0 and data else work())
        return made[0]

    try:
        yield result
    finally:
        if not made:  # left before asking (an error here): its answer is no longer wanted
            with suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            with suppress(OSError):
                os.close(read)


def _child(work: Callable[[], object], read: int, write: int) -> None:
    """The forked child: the work's result down the pipe, then out at once, running nothing of the
    parent's (its exit handlers, its buffered output, the rest of its command)."""
    code = 1
    try:
        os.close(read)
        data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
        with open(write, "wb") as pipe:
            pipe.write(data)
        code = 0
    finally:
        os._exit(code)
