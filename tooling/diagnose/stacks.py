"""Comparing the stacks of all ranks, the way LLNL's STAT does for MPI jobs.

When one rank stops inside a training step, every other rank waits in the same collective.
Group the ranks by their main thread's stack: the big class is the waiting majority, and the
rank(s) outside it are the culprits. The first frame, counted from the outermost, where an
outlier's stack leaves the majority's is where to look.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from tooling.messages import counted


@dataclass(frozen=True)
class Frame:
    name: str
    filename: str
    line: int

    def __str__(self) -> str:
        return f"{self.name} ({self.filename.rsplit('/', 1)[-1]}:{self.line})"


@dataclass(frozen=True)
class RankStack:
    rank: str  # a rank number, or a PID / file name when the rank is unknown
    frames: tuple[Frame, ...]  # innermost first, as py-spy prints them


@dataclass
class StackClass:
    frames: tuple[Frame, ...]
    ranks: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Outlier:
    rank: str
    depth: int  # index, from the outermost frame, of the first frame that differs
    frame: Frame | None  # the outlier's frame there (None: its stack is a prefix of the majority's)
    majority_frame: Frame | None


class DumpError(ValueError):
    """Text that is not a py-spy dump, with where it stops being one (1-based)."""

    def __init__(self, message: str, line: int = 1, col: int = 1) -> None:
        super().__init__(message)
        self.line, self.col = line, col


# faulthandler's text: a header per thread, then one line per frame, innermost first
_FAULTHANDLER_THREAD = re.compile(r"^(?:Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):\Z")
_FAULTHANDLER_FRAME = re.compile(r'^  File "(.*)", line (\d{1,10}) in (.+)\Z')  # (no line number is longer)


def parse_dump(text: str) -> tuple[Frame, ...]:
    """The main thread's frames from a ``py-spy dump`` (its ``--json`` output or its text) or
    from ``faulthandler`` (what the watchdog falls back to when py-spy cannot attach)."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            threads = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise DumpError(f"invalid JSON ({exc.msg})", exc.lineno, exc.colno) from None
        except RecursionError:  # a dump nests two levels deep; thousands is not one
            raise DumpError("JSON nested too deeply") from None
        return _json_frames(threads)
    if any(_FAULTHANDLER_THREAD.match(line) for line in text.splitlines()):
        return _faulthandler_frames(text)
    frames: list[Frame] = []
    in_thread = False
    for line in text.splitlines():
        if line.startswith("Thread "):
            if in_thread:
                break  # the first thread py-spy prints is the main thread
            in_thread = True
        elif in_thread and (m := re.match(r"^\s+(.+?) \((.*):(\d{1,10})\)\s*$", line)):
            frames.append(Frame(m.group(1), m.group(2), int(m.group(3))))
    return tuple(frames)


def _faulthandler_frames(text: str) -> tuple[Frame, ...]:
    """The last thread faulthandler prints: CPython lists threads newest first, so the last is
    the oldest, the main thread (the thread that took the signal is marked "Current", not it)."""
    threads: list[list[Frame]] = []
    for line in text.splitlines():
        if _FAULTHANDLER_THREAD.match(line):
            threads.append([])
        elif threads and (m := _FAULTHANDLER_FRAME.match(line)):
            threads[-1].append(Frame(m.group(3), m.group(1), int(m.group(2))))
    return tuple(threads[-1])


def _json_frames(threads: object) -> tuple[Frame, ...]:
    if not isinstance(threads, list) or not all(isinstance(t, dict) for t in threads):
        raise DumpError("JSON that is not a list of threads")
    main = next((t for t in threads if t.get("os_thread_id") == t.get("pid")), threads[0] if threads else {})
    frames = main.get("frames", [])
    try:
        return tuple(Frame(str(f["name"]), str(f["filename"]), _line_number(f["line"])) for f in frames)
    except (KeyError, TypeError, ValueError):
        raise DumpError("a frame without name, filename and line") from None


def _line_number(value: object) -> int:
    """A JSON frame's line number; ValueError for anything else (int() would take 2.5 and true,
    and fail otherwise on an infinity or thousands of digits)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 10**10:
        raise ValueError(f"not a line number: {str(value)[:20]!r}")
    return value


def classes(stacks: list[RankStack]) -> list[StackClass]:
    """Ranks grouped by identical stacks, biggest class first."""
    by_stack: dict[tuple[Frame, ...], StackClass] = {}
    for stack in stacks:
        by_stack.setdefault(stack.frames, StackClass(stack.frames)).ranks.append(stack.rank)
    return sorted(by_stack.values(), key=lambda c: (-len(c.ranks), _order(c.ranks[0])))


def _order(rank: str) -> tuple[int, str]:
    return (int(rank), "") if rank.isdigit() else (1 << 30, rank)


def outliers(stacks: list[RankStack]) -> list[Outlier]:
    """The ranks outside the majority class and where each leaves it; none if all agree."""
    groups = classes(stacks)
    if len(groups) < 2:
        return []
    majority = tuple(reversed(groups[0].frames))
    found = []
    for group in groups[1:]:
        mine = tuple(reversed(group.frames))
        depth = next((i for i, (a, b) in enumerate(zip(mine, majority)) if a != b), min(len(mine), len(majority)))
        for rank in group.ranks:
            found.append(Outlier(rank, depth, mine[depth] if depth < len(mine) else None,
                                 majority[depth] if depth < len(majority) else None))
    return sorted(found, key=lambda o: _order(o.rank))


def report(stacks: list[RankStack], *, top: int = 4) -> str:
    """The equivalence classes and the verdict, for a terminal or a lab page."""
    groups = classes(stacks)
    lines = [f"{counted(len(stacks), 'rank')}, {counted(len(groups), 'distinct stack')}"]
    for group in groups:
        label = ", ".join(group.ranks)
        path = " <- ".join(str(f) for f in group.frames[:top]) or "(no Python frames)"
        lines.append(f"  rank{'s' * (len(group.ranks) != 1)} {label} ({len(group.ranks)}): {path}")
    found = outliers(stacks)
    if not found:
        lines.append("no outlier: every rank is in the same place")
    for o in found:
        lines.append(f"outlier: rank {o.rank}, which leaves the majority at depth {o.depth}: it is in "
                     f"{o.frame or 'nothing deeper'}, the others in {o.majority_frame or 'nothing deeper'}")
    return "\n".join(lines)


MAX_TITLE = 200  # the incident schema's limit


def incident_values(stacks: list[RankStack]) -> dict[str, Any]:
    """Fields of a hang incident from every rank's stack (keyword arguments of
    :func:`tooling.writers.scaffold.new_incident`; the caller adds run, actions and the rest): the
    odd rank(s) out in the title and ranks, the innermost frame as the signature, the grouped
    stacks and the culprit's whole stack as findings."""
    found = outliers(stacks)
    values: dict[str, Any] = {"severity": "sev2", "symptom": "hang", "layer": "unknown", "ranks": [],
                              "findings": [report(stacks).replace("\n", "; ")]}
    if not found:
        top = classes(stacks)[0].frames if stacks else ()
        where = top[0] if top else "no Python frame"
        title = (f"No progress: the only rank stopped in {where}" if len(stacks) == 1 else
                 f"No progress: all {len(stacks)} ranks stopped in {where}; no rank's stack differs")
        return {**values, "title": _clip(title), "signatures": [str(f) for f in top[:1]]}
    names = ", ".join(o.rank for o in found)
    own = next(s for s in stacks if s.rank == found[0].rank)
    title = (f"Rank {names} hung in {found[0].frame or found[0].majority_frame}; the other "
             f"{len(stacks) - len(found)} ranks wait in {found[0].majority_frame or 'the collective'}")
    values["findings"].append(f"stack of rank {names}: " + " <- ".join(str(f) for f in own.frames))
    return {**values, "title": _clip(title), "signatures": [str(f) for f in own.frames[:1]],
            "ranks": [int(o.rank) for o in found if o.rank.isdigit()]}


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TITLE else text[:MAX_TITLE - 1] + "…"
