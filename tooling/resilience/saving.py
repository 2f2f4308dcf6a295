"""How a checkpoint's bytes reach the disk: the copy a background save works from, the fsync
that hides the checksum, the cleanup after a failed write, and the deletion of rotated-out files.
"""
from __future__ import annotations

import errno
import mmap
import os
import shutil
import threading
import traceback
import zlib
from pathlib import Path
from typing import Any

import torch


class CheckpointSaveError(OSError):
    """A save could not write its checkpoint (full disk, I/O error). Its temporary file is
    already removed; the message names the folder, the free space and the size needed."""


def snapshot(state: Any, reuse: Any = None) -> Any:
    """A copy of ``state`` that later training steps cannot change (tensors copied to CPU).

    A tensor is copied into the tensor at the same place in ``reuse`` (the previous snapshot)
    when shape and dtype match, so a background save allocates nothing once warm: fresh pages
    for a large state cost several times the copy itself.
    """
    if isinstance(state, torch.Tensor):
        source = state.detach()
        if (isinstance(reuse, torch.Tensor) and reuse.shape == source.shape and reuse.dtype == source.dtype
                and source.layout is torch.strided and not source.is_quantized):
            return reuse.copy_(source)
        if source.is_cuda:  # pinned memory: the copy off the GPU runs at full bus speed
            return torch.empty_like(source, device="cpu", pin_memory=True).copy_(source)
        return source.to("cpu", copy=True)
    if isinstance(state, dict):
        old = reuse if isinstance(reuse, dict) else {}
        return {k: snapshot(v, old.get(k)) for k, v in state.items()}
    if isinstance(state, (list, tuple)):
        olds = reuse if isinstance(reuse, (list, tuple)) and len(reuse) == len(state) else [None] * len(state)
        return type(state)(snapshot(v, old) for v, old in zip(state, olds))
    return state


def tensor_bytes(state: Any) -> int:
    """Bytes of the distinct tensor storages in ``state``: about what torch.save writes. A
    DTensor counts its local shard (this rank's part)."""
    storages: dict[tuple[torch.device, int], int] = {}  # the device itself: str() of one costs ~10 us
    stack = [state]
    while stack:
        value = stack.pop()
        if isinstance(value, torch.Tensor) and callable(getattr(value, "to_local", None)):
            value = value.to_local()  # a DTensor: its wrapper has no storage of its own on several ranks
        if isinstance(value, torch.Tensor) and value.layout is torch.strided:
            storage = value.untyped_storage()
            storages[(storage.device, storage.data_ptr())] = storage.nbytes()
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return sum(storages.values())


def sync_and_checksum(path: Path) -> tuple[str, int]:
    """fsync the file while its CRC-32 is read back from the page cache: the checksum hides
    behind the disk write instead of adding to it. Returns (CRC-32, size).

    The file is mapped rather than read: no copy, so the CRC runs at its own speed. Safe only
    on a file no one else can truncate meanwhile (a mapped page cut off raises SIGBUS): the
    writer's own temporary file, under its lock."""
    with open(path, "rb") as handle:
        failed: list[BaseException] = []

        def sync() -> None:
            try:
                os.fsync(handle.fileno())
            except BaseException as exc:  # re-raised below, in the saving thread
                failed.append(exc)

        syncer = threading.Thread(target=sync, name="checkpoint-fsync")
        syncer.start()
        try:
            size = os.fstat(handle.fileno()).st_size
            if size == 0:
                crc = f"{0:08x}"
            else:
                with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                    crc = f"{zlib.crc32(mapped):08x}"
        finally:
            syncer.join()
        if failed:
            raise failed[0]
        return crc, size


def release_frames(error: BaseException) -> None:
    """Clear the locals of the finished frames of ``error`` and the errors it chains: torch's
    writer, still referenced there, keeps the temporary file open (and its blocks allocated
    after the unlink) for as long as anyone holds the error."""
    seen: set[int] = set()
    chained: BaseException | None = error
    while chained is not None and id(chained) not in seen:
        seen.add(id(chained))
        traceback.clear_frames(chained.__traceback__)
        chained = chained.__context__


def free_space(directory: Path) -> int | None:
    """Bytes free on the file system of ``directory``; None when it cannot be told."""
    try:
        return shutil.disk_usage(directory).free
    except OSError:
        return None


def mib(size: int | None) -> str:
    return "unknown" if size is None else f"{size / 2**20:.2f} MiB"


def save_error(directory: Path, step: int, state: Any, cause: BaseException) -> CheckpointSaveError:
    """The error a failed write raises: folder, free space, size needed (torch's own says neither)."""
    need, free = tensor_bytes(state), free_space(directory)
    error = CheckpointSaveError(
        f"{directory}: saving step {step} failed ({type(cause).__name__}: {cause}); "
        f"{mib(free)} free there, the checkpoint needs "
        f"about {need / 2**20:.2f} MiB; its temporary file was removed")
    full = free is not None and free < need
    error.errno = getattr(cause, "errno", None) or (errno.ENOSPC if full else None)
    return error
