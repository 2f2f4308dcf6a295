"""The kernel's lines since the last check, read through the failure-mode catalogue.

The lines are those of ``dmesg`` (or an emulated node's stand-in file), scanned as ``tooling
scan`` scans a log (:class:`tooling.logs.scan.Scanner`: the catalogue's recognisers, its codes,
one draft per distinct failure); there is no list of patterns here. A draft is a fault of the
node when the catalogue serves its mode with the node drain (:data:`DRAIN_AUTOMATION`: an Xid,
an ECC or machine-check error); the others (a job's OOM kill) are said, not acted on.

Where the last check that acted read to is an :class:`Offset`: the text of the last line it read
and which of the lines with that text it was. The ring buffer only drops its oldest lines, so
when that line is gone every line is newer (after a reboot, too: the first line's time differs).
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from tooling.health.faults import DRAIN_AUTOMATION, Fault
from tooling.health.gpus import Gpu, gpu_of

if TYPE_CHECKING:
    from tooling.logs.drafts import Draft


@dataclass(frozen=True)
class Offset:
    last: str  # the text of the last line read
    nth: int  # it was the nth line with that text


def after(lines: list[str], offset: Offset | None) -> list[str]:
    """The lines after ``offset``: all of them when it is not among them."""
    if offset is None:
        return lines
    seen = 0
    for index, line in enumerate(lines):
        if line == offset.last:
            seen += 1
            if seen == offset.nth:
                return lines[index + 1:]
    return lines


def end_of(lines: list[str]) -> Offset | None:
    """The offset of the last of ``lines`` (None: there are none)."""
    if not lines:
        return None
    return Offset(lines[-1], lines.count(lines[-1]))


def drafts(lines: list[str], *, name: str, now: datetime) -> list[Draft]:
    """One draft per distinct failure the lines show, as ``tooling scan`` drafts them from a log
    called ``name`` (the stand-in file, or dmesg)."""
    if not lines:
        return []
    # the scan's machinery (the catalogue's automaton) loaded only when there are lines to read
    from tooling.logs.chunks import Chunks
    from tooling.logs.draft_book import DraftBook
    from tooling.logs.scan import Scanner

    book = DraftBook()
    Scanner(Chunks(io.BytesIO("\n".join(lines).encode() + b"\n"), name), book, now).run()
    book.finish()
    return book.result()


def faults(found: list[Draft], *, source: str, gpus: list[Gpu]) -> tuple[list[Fault], list[Draft]]:
    """The node's faults among the drafts (an event each, counted in occurrences), and the rest."""
    node, others = [], []
    for draft in found:
        if draft.mode.automation != DRAIN_AUTOMATION:
            others.append(draft)
            continue
        codes = " ".join(draft.all_codes) or draft.mode.title
        where = next((g for line in draft.signatures if (g := gpu_of(line, gpus))), None)
        node.append(Fault(draft.mode, f"{codes} {where}" if where else codes, tuple(draft.signatures), source,
                          draft=draft, occurrences=max(draft.occurrences, 1)))
    return node, others
