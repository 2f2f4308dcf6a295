"""The drafts of one scan, kept in a book: each hit added in log order, those that are the
aftermath of another failure counted, not drafted (:mod:`tooling.logs.aftermath`), at most
:data:`MAX_DRAFTS` distinct failures; and, for a log that goes on (tooling watch), what the book
remembers of each failure from one take to the next, so that lines read in two polls are drafted
as they are in one. One failure's draft is :class:`tooling.logs.drafts.Draft`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tooling.logs.aftermath import WINDOW, Aftermath
from tooling.logs.drafts import MAX_NAMES, Draft, Hit, Key, Moment, failure

MAX_DRAFTS = 500  # distinct failures per scan; a log with more is noise, not incidents


@dataclass(frozen=True)
class Seen:
    """What a log that goes on (tooling watch) remembers of a failure from one poll to the next,
    so that its lines read in two polls are what they are read in one: the same failure, filed as
    the same incident (the signatures it was first drafted with, which the incident's identity
    is read from, are those of its later drafts: later lines add occurrences, not signatures),
    and within OCCURRENCE_GAP of its latest line, the same occurrence."""
    signatures: tuple[str, ...]
    forms: tuple[str, ...]  # of the signatures (signatures.normalise)
    moment: Moment | None  # of its latest line


@dataclass
class DraftBook:
    """The drafts of one scan; :meth:`add` each hit in log order, :meth:`finish` each log."""
    drafts: dict[Key, Draft] = field(default_factory=dict)
    dropped: int = 0  # lines of failures past MAX_DRAFTS
    aftermath: Aftermath = field(default_factory=Aftermath)
    seen: dict[Key, Seen] = field(default_factory=dict)  # of the failures of earlier takes: see Seen
    _places: list[tuple[str, int, str, datetime | None]] = field(default_factory=list)

    @property
    def consequences(self) -> int:
        """Lines taken as the aftermath of another failure."""
        return self.aftermath.explained

    def add(self, hit: Hit) -> None:
        for ready in self.aftermath.see(hit):
            self._draft(ready)

    def finish(self) -> None:
        for ready in self.aftermath.finish():
            self._draft(ready)

    def take(self, *, settled: bool = True) -> list[Draft]:
        """The drafts so far, and a fresh start for the next ones, for a log that goes on
        (tooling watch, once per poll): the failures already seen stay remembered, so that their
        aftermath in later lines is known and a failure that goes on is no new occurrence (a draft
        of only such lines has none). Lines that wait for a cause below them are drafted when the
        log is ``settled`` (its writer paused, or the watch ends), else they wait on: the cause
        may be the next line written."""
        for ready in self.aftermath.flush() if settled else ():
            self._draft(ready)
        drafts = self.result()
        for key, draft in self.drafts.items():
            first = self.seen.pop(key, None)  # (put last: the least recently seen are the first dropped)
            self.seen[key] = Seen(first.signatures if first else tuple(draft.signatures),
                                  first.forms if first else tuple(draft.forms), draft.moment)
        while len(self.seen) > MAX_DRAFTS:
            del self.seen[next(iter(self.seen))]
        self.drafts, self._places = {}, []
        return drafts

    def _draft(self, hit: Hit) -> None:
        mode = hit.recognition.mode
        assert mode is not None, "only recognised lines are hits"
        key = failure(hit.recognition, hit.key)
        if key not in self.drafts and len(self.drafts) >= MAX_DRAFTS:
            self.dropped += 1
            return
        draft = self.drafts.get(key)
        if draft is None:
            seen = self.seen.get(key)
            draft = self.drafts[key] = Draft(mode, key[1]) if seen is None else \
                Draft.going_on(mode, key[1], seen.signatures, seen.forms, seen.moment)
        draft.add(hit)

    def locate(self, log: str, rank: int, host: str, at: datetime | None) -> None:
        """torchrun's summary says which host a failed rank ran on: drafts of that rank in this
        log, seen at most WINDOW before, learn its host (when the scan ends: some wait)."""
        if len(self._places) < MAX_NAMES:
            self._places.append((log, rank, host, at))

    def result(self) -> list[Draft]:
        """The drafts in the order their failures were first seen."""
        for log, rank, host, at in self._places:
            for draft in self.drafts.values():
                recent = at is None or draft.last_at is None or abs(at - draft.last_at) <= WINDOW
                if rank in draft.ranks and log in draft.logs and recent and len(draft.nodes) < MAX_NAMES:
                    draft.nodes[host] = None
        return sorted(self.drafts.values(), key=_order)


def _order(draft: Draft) -> tuple[Any, ...]:
    first_log = next(iter(draft.logs))
    return (draft.detected_at is None, draft.detected_at or datetime.min, first_log, draft.logs[first_log].first)
