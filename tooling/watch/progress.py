"""Missing progress: the training loop's step reports stop, and a hang is drafted.

A progress line is what :func:`tooling.catalogue.signatures.is_progress` says it is (``step 1200 |
loss 2.31``, ``iteration 7010/159576 | lm loss: 6.4``). Only the last one of each chunk matters,
so it is looked for from the end of the chunk back, a window at a time, with one single-match
automaton pass per window: a log of progress lines costs a few lines, a log without any (dmesg)
one pass.

:class:`Stall` keeps the time the last progress line was *seen* (the poll's clock, not the time
the line claims: a line may give no time, or a time in a zone it does not name). A log that never
showed progress (dmesg, a scheduler's output) raises no hang. One hang per stall: after it is
raised, nothing more until progress resumes; a later stall is another occurrence of the same hang.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tooling.catalogue.modes import catalogue
from tooling.catalogue.signatures import is_progress
from tooling.logs import blocks
from tooling.logs.sampling import progress_matcher
from tooling.messages import counted
from tooling.records.model import record_time
from tooling.records.runs import stalled
from tooling.writers.filing import SEVERITY

WINDOW = 64 << 10  # bytes first looked at, from the end of a chunk; four times more each time after
HANG = "training.hang"  # the catalogue's mode for a run that stopped making progress, cause unknown


def last_progress(buffer: bytearray, end: int) -> int | None:
    """Where the last progress line among the buffer's first ``end`` bytes starts; None: none."""
    high, window = end, WINDOW
    with memoryview(buffer) as view:
        while high > 0:
            low = buffer.rfind(b"\n", 0, max(0, high - window)) + 1 if high > window else 0
            with view[low:high] as part:
                found = next(iter(progress_matcher().scan(part)), None)  # type: ignore[arg-type]
            if found is not None and (start := _last_line(buffer, low, high)) is not None:
                return start
            high, window = low, window * 4
    return None


def _last_line(buffer: bytearray, low: int, high: int) -> int | None:
    """The start of the last progress line in buffer[low:high], which starts at a line."""
    end = high
    while end > low:
        start = buffer.rfind(b"\n", low, end - 1) + 1 or low
        if is_progress(blocks.decode(buffer, start, end)[0]):
            return start
        end = start
    return None


@dataclass(frozen=True)
class Progress:
    """The last progress line seen: when (by the poll's clock), in which log, at which line."""
    at: datetime
    log: str
    line: int
    text: str


@dataclass
class Stall:
    """Progress seen, and whether a hang was already raised for the stall going on now."""
    last: Progress | None = None
    raised: bool = False

    def saw(self, progress: Progress) -> None:
        self.last, self.raised = progress, False

    def due(self, now: datetime, minutes: float) -> bool:
        """A stall no hang was raised for yet, ``minutes`` or more since the last progress."""
        return self.last is not None and not self.raised and stalled(now - self.last.at, minutes)


def minutes_text(minutes: float) -> str:
    whole = int(minutes)
    return counted(whole, "minute") if minutes == whole else f"{minutes:g} minutes"


def hang_values(last: Progress, *, now: datetime, minutes: float, source: str, logs: list[str],
                where: dict[str, Any]) -> dict[str, Any]:
    """The hang incident (keyword arguments of :func:`tooling.writers.scaffold.new_incident`)."""
    mode = catalogue().get(HANG)
    assert mode is not None, "the catalogue has a mode for hangs"
    waited = minutes_text(minutes)
    notes = (f"Drafted by tooling watch: no progress line (a step report of the training loop) in "
             f"{', '.join(logs)} for {waited} ({source}). The last one was line {last.line} of {last.log}, "
             f"seen at {record_time(last.at)}: {last.text!r}. So started_at is when that line was seen. "
             f"{mode.summary}")
    links = [{"title": f"log watched: {os.path.basename(log)}", "url": os.path.abspath(log)} for log in logs]
    return {"title": f"{mode.title}: no progress for {waited}", "symptom": mode.symptom, "layer": mode.layer,
            "signatures": [], "detected_at": record_time(now), "run": where["run"], "severity": SEVERITY,
            "extra": {"failure_mode": mode.id, "started_at": record_time(last.at), "notes": notes, "links": links,
                      **where["extra"]}}


def hang_json(last: Progress, values: dict[str, Any], minutes: float) -> dict[str, Any]:
    """What --json says of a hang."""
    return {"title": values["title"], "failure_mode": HANG, "layer": values["layer"], "symptom": values["symptom"],
            "detected_at": values["detected_at"], "started_at": values["extra"]["started_at"],
            "stall_after_minutes": minutes,
            "last_progress": {"log": last.log, "line": last.line, "text": last.text, "seen_at": record_time(last.at)}}
