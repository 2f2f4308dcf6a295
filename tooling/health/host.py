"""The node's own state: room on the checkpoint and log file systems, shared-memory segments
left by processes that died, and which processes run inside a SLURM job.

A file system is asked through ``stat -f`` in a process of its own (:func:`tooling.programs.bounded`),
so a dead NFS mount costs the probe's timeout, not a hung Prolog. A segment in /dev/shm is stale
when no process has it open or mapped and it has not been written for a while: the leftover of a
process killed mid-run (a process that made it a moment ago still holds it).
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from tooling.health.faults import Fault, mode

FULL_MODE, INODES_MODE, SHM_MODE = "storage.disk-full", "storage.inode-exhaustion", "host.stale-shared-memory"
# block size, blocks, free to users, inodes, free inodes, free blocks (those reserved for root too)
STATFS = ["stat", "-f", "-c", "%S %b %a %c %d %f", "--"]
JOB_STEP = "slurmstepd"  # every process of a SLURM job descends from one


@dataclass(frozen=True)
class Room:
    path: str
    total: int  # bytes
    free: int  # bytes a user may still write
    inodes: int  # 0: the file system does not count them (btrfs)
    free_inodes: int
    free_reserved: int = 0  # bytes free, the blocks reserved for root included (df's "used" is total minus this)

    @property
    def free_percent(self) -> int:
        """Percent of the space a user may still write, rounded down: a byte short of 1% is 0%."""
        return math.floor(100 * self.free / self.total) if self.total else 100

    @property
    def free_inodes_percent(self) -> int:
        return math.floor(100 * self.free_inodes / self.inodes) if self.inodes else 100

    @property
    def used_percent(self) -> int:
        """Percent of the space used as ``df`` says it (Use%): used over used and free to users,
        rounded up, so the blocks reserved for root count for neither."""
        used = self.total - max(self.free_reserved, self.free)
        return math.ceil(100 * used / (used + self.free)) if used + self.free else 0

    @property
    def inodes_used_percent(self) -> int:
        """Percent of the inodes used as ``df -i`` says it (IUse%), rounded up; 0 where none are counted."""
        return math.ceil(100 * (self.inodes - self.free_inodes) / self.inodes) if self.inodes else 0

    def summary(self) -> str:
        inodes = f"; {self.free_inodes:,} of {self.inodes:,} inodes free" if self.inodes else ""
        return f"{self.path}: {size(self.free)} free of {size(self.total)} ({self.free_percent}% free){inodes}"


def size(count: int) -> str:
    value, unit = float(count), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024 or unit == "PiB":
            break
        value /= 1024
    return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"


def read_room(path: str, output: str) -> Room | None:
    """``stat -f -c '%S %b %a %c %d %f'``'s answer for ``path`` (None: not that)."""
    parts = output.split()
    if len(parts) != 6 or not all(p.isdigit() for p in parts):
        return None
    block, blocks, free, inodes, free_inodes, free_reserved = (int(p) for p in parts)
    return Room(path, block * blocks, block * free, inodes, free_inodes, block * free_reserved)


def room_faults(room: Room, *, min_free: float, source: str) -> list[Fault]:
    """A file system with less than ``min_free`` percent of its space, or of its inodes, left."""
    faults = []
    if room.total and 100 * room.free / room.total < min_free:
        faults.append(Fault(mode(FULL_MODE), f"{room.path} {room.free_percent}% free", (room.summary(),), source,
                            standing=f"space {room.path}"))
    if room.inodes and 100 * room.free_inodes / room.inodes < min_free:
        faults.append(Fault(mode(INODES_MODE), f"{room.path} {room.free_inodes_percent}% inodes free",
                            (room.summary(),), source, standing=f"inodes {room.path}"))
    return faults


def room_warnings(room: Room, *, thresholds: tuple[int, ...], faults: list[Fault], source: str) -> list[Fault]:
    """The storage-capacity-guard's warnings: space or inodes used at or above a threshold (df's
    Use% and IUse%), the highest one crossed; none for what ``faults`` already found short. Their
    lines name the threshold, not the bytes, so a warning is filed again only when it crosses
    the next one (or comes back after it cleared)."""
    warned, short = [], {f.standing for f in faults}
    said = " and ".join(f"{t}%" for t in thresholds)
    for name, used, mode_id in (("space", room.used_percent, FULL_MODE), ("inodes", room.inodes_used_percent,
                                                                           INODES_MODE)):
        level = max((t for t in thresholds if used >= t), default=None)
        standing = f"{name} {room.path}"
        if level is None or standing in short:
            continue
        line = f"{room.path}: {level}% or more of its {name} used (the storage-capacity-guard warns at {said})"
        warned.append(Fault(mode(mode_id), f"{room.path} {used}% {name} used, warning at {level}%", (line,), source,
                            standing=standing, warning=True))
    return warned


@dataclass(frozen=True)
class Segment:
    path: str
    size: int
    written: float  # mtime


def old_segments(folder: Path, *, grace: float, now: float | None = None) -> list[Segment]:
    """The files of the shared-memory folder not written for ``grace`` seconds: the candidates."""
    now = time.time() if now is None else now
    found = []
    with os.scandir(folder) as entries:
        for entry in entries:
            try:
                if entry.is_file(follow_symlinks=False) and now - (info := entry.stat()).st_mtime >= grace:
                    found.append(Segment(entry.path, info.st_size, info.st_mtime))
            except FileNotFoundError:  # removed meanwhile: its owner is alive
                continue
    return sorted(found, key=lambda s: s.path)


def held(paths: set[str], *, deadline: float) -> set[str]:
    """Which of ``paths`` some process has open or mapped (read from /proc; the processes this
    user may not look into hold nothing, which for root is none)."""
    holding: set[str] = set()
    for pid in _pids():
        if time.monotonic() > deadline:
            raise TimeoutError("/proc")
        try:
            with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as maps:
                for line in maps:  # "7f0c0000-7f0c1000 rw-s 00000000 00:19 1234    /dev/shm/psm_0a1b"
                    at = line.find("/")
                    if at >= 0 and (path := line[at:].rstrip("\n")) in paths:
                        holding.add(path)
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target in paths:
                    holding.add(target)
        except OSError:  # gone, or not ours to read
            continue
        if holding == paths:
            break
    return holding


def stale_fault(stale: list[Segment], *, folder: Path, source: str) -> Fault:
    names = ", ".join(Path(s.path).name for s in stale[:3]) + (f" and {len(stale) - 3} more" if len(stale) > 3 else "")
    lines = tuple(f"{s.path}: {size(s.size)}, last written {_stamp(s.written)}, open or mapped by no process"
                  for s in stale)
    evidence = f"stale {stale[0].path}" if len(stale) == 1 else f"{len(stale)} stale in {folder}: {names}"
    return Fault(mode(SHM_MODE), evidence, lines, source, standing=f"shm {folder}")


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).replace(microsecond=0).isoformat()


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def in_a_job(pid: int) -> bool:
    """Whether the process descends from a slurmstepd: a running job's, not a leftover."""
    seen = set()
    while pid > 1 and pid not in seen:
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stat:
                text = stat.read()
        except OSError:
            return False
        name, _, rest = text.partition(" (")[2].rpartition(") ")
        if name == JOB_STEP:
            return True
        pid = int(rest.split()[1])
    return False
