"""Which occurrences of a failure each watch counted, so that watches of one log that are
independent readers (each its own offset file) count each occurrence once between them.

An incident a watch writes carries, beside its poll's mark, where the latest occurrence it counted
in each log starts: ``watch_counted: {WATCH: {LOG: {"at": POSIX time, "uptime": seconds, "line":
N}}}``, the log by its absolute path, the start by the log's own clock where its first line has a
time (the same for every reader, however far back each began or whatever rotation it saw), else by
its line number. An occurrence that starts at or before another watch's mark of the same kind in the
same log was counted by that watch, and is not counted again. A watch's own marks are not looked at:
it reads each line once (a poll filed twice after a SIGKILL is told by ``watch_polls``), so a log
whose clock was set back counts on as before for a single watch. Between two watches, occurrences
written after a log's clock went back (a reboot starts dmesg's uptime again) are taken as counted
until its clock passes the marks again: marks are the latest starts, not a list of every one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

from tooling.logs.drafts import Start
from tooling.records.characters import first_bad

FIELD = "watch_counted"
KINDS = ("at", "uptime", "line")  # of a start: a time, seconds since boot, a line's number
# what the incident schema lets a mark hold of each kind (a mark out of them is not written)
BOUNDS = {"at": (-1e11, 1e11), "uptime": (0, 1e11), "line": (0, 2**53 - 1)}
Marks = dict[str, dict[str, float]]  # log -> kind of start -> the latest start of that kind counted


@dataclass(frozen=True)
class Counted:
    """The occurrences of a failure one poll read in one log."""
    occurrences: int
    starts: tuple[Start, ...]  # where the latest of them start (drafts.MAX_STARTS at most), in log order

    def covered(self, marks: list[dict[str, float]]) -> int:
        """How many of them start at or before one of ``marks`` (other watches' marks of this log).
        Those whose start is not kept come before the first kept: counted when it is."""
        def counted(start: Start) -> bool:
            return any(start[1] <= mark.get(start[0], -math.inf) for mark in marks)
        if not marks or not self.starts:
            return 0
        return sum(map(counted, self.starts)) + (self.occurrences - len(self.starts) if counted(self.starts[0]) else 0)


def merged(groups: Iterable[dict[str, Counted]]) -> dict[str, Counted]:
    """The occurrences of one failure found in several places of a poll, by log."""
    out: dict[str, Counted] = {}
    for group in groups:
        for log, counted in group.items():
            was = out.get(log, Counted(0, ()))
            out[log] = Counted(was.occurrences + counted.occurrences, was.starts + counted.starts)
    return out


def marks_in(document: Any) -> dict[str, Marks]:
    """The marks an incident record carries, by watch; what is not of their shape (a person's
    edit) is no mark."""
    found = document.get(FIELD) if isinstance(document, dict) else None
    if not isinstance(found, dict):
        return {}
    return {str(watch): {str(log): {k: v for k, v in mark.items() if k in KINDS and _number(v)}
                         for log, mark in logs.items() if isinstance(mark, dict)}
            for watch, logs in found.items() if isinstance(logs, dict)}


def covered(counted: dict[str, Counted], marks: dict[str, Marks], watch: str) -> int:
    """How many of the occurrences ``counted`` the other watches than ``watch`` counted already."""
    return sum(c.covered([m[log] for w, m in marks.items() if w != watch and log in m]) for log, c in counted.items())


def advanced(mine: Marks | None, counted: dict[str, Counted]) -> Marks:
    """A watch's marks (``mine``, as its incident carries them) once it counted ``counted``: the
    latest start of each kind in each log."""
    out = {log: dict(kinds) for log, kinds in (mine or {}).items()}
    for log, c in counted.items():
        if not recordable(log):
            continue  # no record may hold its name: its occurrences go uncompared between watches
        for kind, value in c.starts:
            if not BOUNDS[kind][0] <= value <= BOUNDS[kind][1]:
                continue  # a clock or count no record can hold: this start goes uncompared
            mark = out.setdefault(log, {})
            mark[kind] = max(mark.get(kind, value), value)
    return out


def as_json(counted: dict[str, Counted]) -> dict[str, Any]:
    return {log: {"occurrences": c.occurrences, "starts": [list(s) for s in c.starts]} for log, c in counted.items()}


def from_json(data: Any, where: str) -> dict[str, Counted]:
    """What :func:`as_json` wrote (the journal of an offset file); ValueError, located, if not that."""
    if not isinstance(data, dict):
        raise ValueError(f"{where} is {data!r}, expected a mapping of log to its occurrences")
    out = {}
    for log, item in data.items():
        at = f"{where}.{log}"
        starts = item.get("starts") if isinstance(item, dict) else None
        count = item.get("occurrences") if isinstance(item, dict) else None
        if type(count) is not int or count < 0 or not isinstance(starts, list) or not all(
                isinstance(s, list) and len(s) == 2 and s[0] in KINDS and _number(s[1]) for s in starts):
            raise ValueError(f"{at} is {item!r}, expected {{\"occurrences\": N, \"starts\": [[kind, number], ...]}}")
        out[str(log)] = Counted(count, tuple((s[0], s[1]) for s in starts))
    return out


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def recordable(log: str) -> bool:
    """Whether a record can name ``log`` (the schema's rule for a mark's key): an absolute path of
    characters a record may hold. A log named with a control character is read like any other."""
    return log.startswith("/") and first_bad(log) is None
