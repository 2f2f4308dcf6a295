"""Decisions every rank must take together, and a process-group teardown that cannot abort.

:func:`any_rank` turns a flag raised on one rank (a SIGUSR1 from SLURM, a STOP file seen by one
node) into the same answer on every rank, so all ranks save the same step and stop together.
Without a process group it returns the flag, so the same loop runs on one process.
:func:`from_rank_zero` and :func:`gather_at_rank_zero` do the same for any picklable value: one
rank decides and all act on it, or all report and one decides.

:func:`shutdown` exists because of how gloo and Python 3.11 meet at exit. gloo's worker thread
drops its reference to the last collective's tensor a moment after the caller has woken up.
Dropping a tensor that Python has seen needs the GIL; if the interpreter is already finalising,
the thread is killed instead, and the whole rank aborts with "terminate called without an
active exception" after a perfectly good save. So: wait until gloo has let go, then destroy.

That wait is enough only when the caller knows every tensor of its last collectives and the group
really goes away with destroy_process_group() (its destructor joins gloo's worker threads). A job
with DTensors (FSDP2, torch.distributed.checkpoint) has neither: torch's DTensor caches keep a
DeviceMesh, and through it the process group and its worker threads, alive until the interpreter's
teardown, and the last collectives are torch's own (``broadcast_object_list`` pickles into a
tensor that only gloo still holds when it returns). Under load a worker reaches that tensor after
the interpreter began finalising, and the rank aborts. :func:`exit_rank` ends such a rank without
the interpreter's teardown, which is the only part of the exit that races with those threads.
"""
from __future__ import annotations

import os
import sys
import time
from typing import Any, NoReturn, TypeVar

import torch
import torch.distributed as dist

# One buffer for every vote: shutdown() knows which tensor to wait for, and no vote allocates.
_VOTE = torch.zeros(1, dtype=torch.int64)
T = TypeVar("T")


def any_rank(flag: bool) -> bool:
    """True on every rank when at least one rank passed True (a MAX all-reduce of one integer)."""
    if not (dist.is_available() and dist.is_initialized()):
        return flag
    _VOTE.fill_(1 if flag else 0)
    dist.all_reduce(_VOTE, op=dist.ReduceOp.MAX)
    return bool(_VOTE.item())


def rank_and_world(group: dist.ProcessGroup | None = None) -> tuple[int, int]:
    """This process's rank in ``group`` (the default: the whole job) and its size; (0, 1) alone."""
    if not (dist.is_available() and dist.is_initialized()):
        return 0, 1
    return dist.get_rank(group), dist.get_world_size(group)


def from_rank_zero(value: T, group: dist.ProcessGroup | None = None) -> T:
    """Rank 0's ``value`` on every rank (any picklable object; other ranks pass anything): one
    rank reads or decides, all act on the same answer."""
    if not (dist.is_available() and dist.is_initialized()):
        return value
    box: list[Any] = [value]
    dist.broadcast_object_list(box, src=dist.get_global_rank(group, 0) if group else 0, group=group)
    return box[0]


def gather_at_rank_zero(value: T, group: dist.ProcessGroup | None = None) -> list[T] | None:
    """Every rank's ``value``, in rank order, on rank 0 (None elsewhere). Rank 0 gets the list only
    once every rank has sent its value, so it doubles as a barrier that carries a report."""
    if not (dist.is_available() and dist.is_initialized()):
        return [value]
    rank, world = rank_and_world(group)
    values: list[Any] | None = [None] * world if rank == 0 else None
    dist.gather_object(value, values, dst=dist.get_global_rank(group, 0) if group else 0, group=group)
    return values


def released(tensor: torch.Tensor) -> bool:
    """Whether only Python still holds ``tensor`` (no collective's work object does)."""
    use_count = getattr(tensor, "_use_count", None)
    return use_count is None or use_count() <= 1


def shutdown(*tensors: torch.Tensor, timeout: float = 10.0) -> None:
    """Destroy the default process group once gloo holds neither the vote buffer nor ``tensors``.

    Pass the tensors of your own last collectives (e.g. the gradients you all-reduced).
    Raises ``TimeoutError`` if one is still held after ``timeout`` seconds, which would mean a
    collective is still running: a bug in the caller, not a race.
    """
    if not (dist.is_available() and dist.is_initialized()):
        return
    deadline = time.monotonic() + timeout
    while not all(released(t) for t in (_VOTE, *tensors)):
        if time.monotonic() > deadline:
            raise TimeoutError(f"a collective still holds its tensors after {timeout} s")
        time.sleep(0.001)
    dist.destroy_process_group()


def exit_rank(code: int = 0) -> NoReturn:
    """End this rank's process with exit status ``code``: :func:`shutdown`, flush stdout and
    stderr, then ``os._exit``, skipping the interpreter's teardown (atexit handlers included).

    The last call of a rank whose process group outlives :func:`shutdown` (see the module): close
    what you opened first (files, a checkpoint manager); everything else is the kernel's to free.
    """
    shutdown()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)  # not sys.exit: its teardown is what a gloo worker thread aborts
