"""Whether the process named in a temporary file's name may still be writing it.

Writers that may overlap name their temporary files (or folders) with their pid, so that a
later writer can tell a SIGKILLed writer's leftover from a live writer's file on its way in.
"""
from __future__ import annotations

import os
from pathlib import Path

CLOCK_SLACK = 2.0  # seconds: /proc gives the boot time to the second, a start time to the tick


def writer_alive(pid: int, written_at: float | None = None) -> bool:
    """Whether process ``pid`` is running (not a zombie) and, given ``written_at`` (the file's
    mtime), started before it: a process started later is another one that reused the pid."""
    started = _started(pid)
    if started is None:  # no /proc here: all that can be told is whether the pid exists
        return _exists(pid)
    if started is False:
        return False
    return written_at is None or started <= written_at + CLOCK_SLACK


def _started(pid: int) -> float | bool | None:
    """When ``pid`` started (seconds since the epoch); False: gone or a zombie; None: no /proc."""
    if not Path("/proc/self/stat").exists():
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    if fields[0] in ("Z", "X"):  # dead, only waiting for its parent to read its exit status
        return False
    ticks = int(fields[19])  # field 22 of proc(5), counted from the field after the name
    return _boot_time() + ticks / os.sysconf("SC_CLK_TCK")


def _boot_time() -> float:
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    return 0.0


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True
