"""repeat-cycle: incidents whose ``repeat_of`` links go round in a loop.

``repeat_of`` names the earlier occurrence of the same failure, so following the links from any
incident must end at a first occurrence. A record naming itself is ``self-reference``
(:mod:`~tooling.rules.crossref`); a loop through two or more records is found here, over
the incidents the checked records lead to, in one linear walk (each record is left at most once).
"""
from __future__ import annotations

from typing import Callable, Iterable, Iterator

from tooling.records.findings import Finding
from tooling.records.locate import finding_at
from tooling.records.model import Record
from tooling.rules.others import Others

_WALKING, _DONE = 1, 2


def repeat_cycles(incidents: dict[str, Record]) -> dict[str, list[str]]:
    """{id: the loop of ids from it, round to it again} for every incident on a loop of two or more."""
    return cycles_from(incidents, incidents.get)


def cycles_from(starts: Iterable[str], incident: Callable[[str], Record | None]) -> dict[str, list[str]]:
    """The loops (as :func:`repeat_cycles` gives them) that the links from ``starts`` meet,
    following them with ``incident`` (an id's record, or None): an incident is on a loop exactly
    when the walk from it comes back to it, so a write checks its record's loop alone."""
    state: dict[str, int] = {}
    cycles: dict[str, list[str]] = {}
    for start in starts:
        walked: list[str] = []
        here: object = start
        while isinstance(here, str) and here not in state and (record := incident(here)) is not None:
            state[here] = _WALKING
            walked.append(here)
            here = record.data.get("repeat_of")
        if isinstance(here, str) and state.get(here) == _WALKING:  # this walk met itself: a loop
            loop = walked[walked.index(here):]
            for i, member in enumerate(loop if len(loop) > 1 else []):
                cycles[member] = [*loop[i:], *loop[:i], member]
        state.update(dict.fromkeys(walked, _DONE))
    return cycles


def check_repeat_cycles(records: list[Record], index: Others) -> Iterator[Finding]:
    """repeat-cycle on each of ``records`` whose repeat_of leads round to itself; the links are
    followed through ``index``, from these records only."""
    mine = [r for r in records if r.kind == "incident" and isinstance(r.get("repeat_of"), str)]
    if not mine:
        return
    cycles = cycles_from([r.id for r in mine], lambda i: index.named("incident", i))
    for record in mine:
        loop = cycles.get(record.id)
        if loop is not None and record.get("repeat_of") == loop[1]:  # its own link, not a namesake's
            yield finding_at(record, ["repeat_of"], "repeat-cycle",
                             f"repeat_of goes round in a loop ({' -> '.join(loop)}); expected it to lead to the "
                             "first occurrence of the failure, never back to this incident")
