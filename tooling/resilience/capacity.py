"""Room for one more checkpoint: the check both managers make before they write a byte.

A save that runs out of space half-way costs the write, leaves the run without its newest
checkpoint, and on a shared file system fills it for every other job until the partial file is
removed. So before a save, :class:`~tooling.resilience.checkpoint.CheckpointManager` and
:class:`~tooling.resilience.distributed_checkpoint.DistributedCheckpointManager` (rank 0, for
every rank) ask the file system of their folder (``statvfs``) for:

- space: the next checkpoint's estimate, the larger of the newest checkpoint's size in the
  manifest and the state's tensor bytes (a state that grew since), plus :data:`MARGIN` of it and
  :data:`SLACK` for the manifest and the folder;
- inodes: one for each file the save creates (the checkpoint and the manifest's temporary file;
  a sharded step's folder and files), where the file system counts inodes (btrfs does not).

The checkpoint is written before the oldest one rotates out, so the room is on top of what the
folder holds now. When either is short, the save raises :class:`StorageFull` (a
``CheckpointSaveError``, errno ENOSPC) with one line naming the folder, the file system (its type
and mount point), what it has and what it lacks, and logs that line first (logger
``tooling.resilience.capacity``, ERROR): "no space left on device" or "out of inodes", words the
failure-mode catalogue reads as storage.disk-full and storage.inode-exhaustion, so ``tooling
watch`` on the job's log files it. The warning before it comes from the node health check's
file-system probe, at the catalogue's thresholds. A file system that cannot be asked (a stale
handle) is no reason to refuse: the save then tries, and its own error says what failed.
"""
from __future__ import annotations

import errno
import logging
import math
import os
from dataclasses import dataclass, replace
from pathlib import Path

from tooling.resilience.saving import CheckpointSaveError

log = logging.getLogger(__name__)

MARGIN = 0.05  # of the estimate: torch's container around the tensors, a state a little larger than the last
SLACK = 64 * 1024  # bytes: the manifest's new copy and the folder's own blocks
MOUNTS = Path("/proc/self/mounts")


@dataclass(frozen=True)
class Shortfall:
    """What a save lacks on its file system (picklable: rank 0 sends it to every rank)."""
    directory: str
    step: int
    mount: str
    fstype: str  # "" where /proc/self/mounts cannot say
    free: int  # bytes a user may still write
    estimate: int  # the checkpoint's bytes, without the margin
    basis: str  # where the estimate came from
    free_inodes: int | None  # None: the file system does not count inodes
    need_inodes: int
    files: str  # what the inodes are for, in words

    @property
    def need(self) -> int:
        return math.ceil(self.estimate * (1 + MARGIN)) + SLACK

    @property
    def bytes_short(self) -> int:
        return max(0, self.need - self.free)

    @property
    def inodes_short(self) -> int:
        return 0 if self.free_inodes is None else max(0, self.need_inodes - self.free_inodes)

    def message(self) -> str:
        lacks, parts = [], []
        if self.bytes_short:
            lacks.append("no space left on device")
            parts.append(f"{amount(self.free)} free, the checkpoint needs about {amount(self.need)} ({self.basis}, "
                         f"{amount(self.estimate)}, and a {MARGIN:.0%} margin): {amount(self.bytes_short)} short")
        if self.inodes_short:
            lacks.append("out of inodes")
            parts.append(f"{_count(self.free_inodes or 0, 'inode')} free, the checkpoint needs {self.need_inodes} "
                         f"({self.files}): {self.inodes_short} short")
        return (f"{self.directory}: step {self.step} not saved, refused before writing a byte: "
                f"{' and '.join(lacks)} on the {self.fstype + ' ' if self.fstype else ''}file system at {self.mount}: "
                f"{'; '.join(parts)}")


class StorageFull(CheckpointSaveError):
    """A save refused before it wrote a byte: the folder's file system lacks the space or the
    inodes for one more checkpoint. ``shortfall`` holds the numbers; errno is ENOSPC."""

    def __init__(self, shortfall: Shortfall) -> None:
        super().__init__(shortfall.message())
        self.errno = errno.ENOSPC
        self.filename = shortfall.directory
        self.shortfall = shortfall

    def __str__(self) -> str:  # OSError's own would prefix "[Errno 28]" once errno is set
        return self.shortfall.message()

    def __reduce__(self) -> tuple[type, tuple[Shortfall]]:
        return type(self), (self.shortfall,)


def shortfall(directory: Path, step: int, *, estimate: int, basis: str, files: int,
              what: str) -> Shortfall | None:
    """What ``directory``'s file system lacks for a checkpoint of about ``estimate`` bytes in
    ``files`` new files; None when it has room (or cannot be asked)."""
    try:
        info = os.statvfs(directory)
    except OSError:
        return None
    free_inodes = info.f_favail if info.f_files else None
    found = Shortfall(str(directory), step, "", "", info.f_bavail * info.f_frsize, estimate, basis, free_inodes,
                      files, what)
    if not (found.bytes_short or found.inodes_short):
        return None
    mount, fstype = mount_of(directory)  # only for the message: a refusal is rare
    return replace(found, mount=mount, fstype=fstype)


def refused(found: Shortfall) -> StorageFull:
    """The error of a refused save, its line logged first (the line ``tooling watch`` files)."""
    log.error("%s", found.message())
    return StorageFull(found)


def mount_of(path: Path) -> tuple[str, str]:
    """(mount point, file system type) of ``path``: the longest mount point above it in
    /proc/self/mounts (the last mounted, where two share it); else the top of its device."""
    real = os.path.realpath(path)
    best: tuple[str, str] | None = None
    try:
        lines = MOUNTS.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        mount = _unescape(fields[1])
        inside = real == mount or real.startswith(mount.rstrip("/") + "/")
        if inside and (best is None or len(mount) >= len(best[0])):
            best = (mount, fields[2])
    return best or (_device_top(real), "")


def _device_top(real: str) -> str:
    device, top = os.stat(real).st_dev, real
    while top != "/" and os.stat(os.path.dirname(top)).st_dev == device:
        top = os.path.dirname(top)
    return top


def _unescape(field: str) -> str:
    """/proc/self/mounts writes a space in a path as \\040 (tab \\011, newline \\012, backslash \\134)."""
    for code in ("040", "011", "012", "134"):
        field = field.replace(f"\\{code}", chr(int(code, 8)))
    return field


def amount(count: int) -> str:
    """Bytes in MiB, or GiB from 10 GiB up (a large model's checkpoint)."""
    return f"{count / 2**30:.2f} GiB" if count >= 10 * 2**30 else f"{count / 2**20:.2f} MiB"


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}{'' if n == 1 else 's'}"
