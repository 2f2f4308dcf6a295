"""Drafts of incidents, one per distinct failure found in logs, built hit by hit in bounded memory.

A distinct failure is a failure mode with its distinguishing codes (see
:attr:`~tooling.failures.recognise.Recognition.distinguishing`): two NCCL timeouts on two ranks
are one failure, two different CUDA errors are two.

Aftermath: when a rank dies of anything, it then raises or aborts, and torchrun reports that its
child failed. Those lines explain nothing new, so a line of an *aftermath* mode (the generic
catch-alls, and process.abort: NCCL's watchdog tears a rank down with SIGABRT) is taken as a
consequence of the failure before it when a line of a more specific level came earlier in the
same log, at most :data:`WINDOW` earlier when both lines have a time. Such lines are counted, not
drafted; aftermath with nothing before it to explain it is drafted like any failure.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tooling.failures.catalogue import FailureMode
from tooling.failures.context import When
from tooling.failures.recognise import Recognition

# A rank that died raises or aborts (1); torchrun then reports its child failed (2).
AFTERMATH = {"software.bug": 1, "process.abort": 1, "process.child-failed": 2}
WINDOW = timedelta(minutes=15)
MAX_SIGNATURES = 5  # distinct lines kept per draft; more only repeat the story
MAX_CODES, MAX_NAMES = 20, 1000  # codes, and nodes or ranks, kept per draft
MAX_DRAFTS = 500  # distinct failures per scan; a log with more is noise, not incidents


def level(mode: FailureMode) -> int:
    """0 for a failure that explains itself; higher for aftermath further down the chain."""
    return AFTERMATH.get(mode.id, 2 if mode.generic else 0)


@dataclass(frozen=True)
class Hit:
    """One log line that names a failure, with what the log says around it."""
    log: str
    line: int
    text: str  # the line, verbatim but for control characters (see tooling.failures.scan.clean)
    form: str  # its message normalised: two lines of one form say the same thing
    recognition: Recognition
    when: When | None
    time_from: int | None  # the line whose time it has, when not its own
    nodes: tuple[str, ...] = ()
    ranks: tuple[int, ...] = ()


@dataclass
class Lines:
    first: int
    last: int
    count: int = 0


@dataclass
class Draft:
    mode: FailureMode
    codes: tuple[str, ...]  # the distinguishing codes
    signatures: list[str] = field(default_factory=list)
    forms: list[str] = field(default_factory=list)
    all_codes: dict[str, None] = field(default_factory=dict)
    nodes: dict[str, None] = field(default_factory=dict)
    ranks: dict[int, None] = field(default_factory=dict)
    logs: dict[str, Lines] = field(default_factory=dict)
    count: int = 0
    first: Hit | None = None  # the earliest hit with an absolute time (else the first hit)

    def add(self, hit: Hit) -> None:
        self.count += 1
        lines = self.logs.setdefault(hit.log, Lines(hit.line, hit.line))
        lines.last, lines.count = hit.line, lines.count + 1
        if hit.form not in self.forms and len(self.forms) < MAX_SIGNATURES:
            self.forms.append(hit.form)
            self.signatures.append(hit.text)
        for mapping, values, limit in ((self.all_codes, hit.recognition.codes.all, MAX_CODES),
                                       (self.nodes, hit.nodes, MAX_NAMES), (self.ranks, hit.ranks, MAX_NAMES)):
            for value in values:
                if len(mapping) < limit:
                    mapping[value] = None  # type: ignore[index]
        if self.first is None or _earlier(hit, self.first):
            self.first = hit

    @property
    def detected_at(self) -> datetime | None:
        return self.first.when.at if self.first and self.first.when else None

    def notes(self) -> list[str]:
        """What the draft assumed, in words a person checking it needs."""
        hit = self.first
        when = hit.when if hit else None
        if hit is None or when is None or when.at is None:
            return ["the log gives no absolute time for it" +
                    (" (only seconds since boot)" if when and when.uptime is not None else "")]
        notes = []
        if hit.time_from is not None:
            notes.append(f"its time is that of line {hit.time_from} of {hit.log}, the last timestamped line before it")
        if when.zone_assumed:
            notes.append("the log gives no time zone: taken as UTC")
        if when.year_assumed:
            notes.append(f"the log gives no year: taken as {when.at.year}")
        return notes


def _earlier(hit: Hit, than: Hit) -> bool:
    mine, theirs = (h.when.at if h.when else None for h in (hit, than))
    return mine is not None and (theirs is None or mine < theirs)


@dataclass
class DraftBook:
    """The drafts of one scan; :meth:`add` each hit in log order, :meth:`start` each log."""
    drafts: dict[tuple[str, tuple[str, ...]], Draft] = field(default_factory=dict)
    consequences: int = 0  # aftermath lines taken as consequences of an earlier failure
    dropped: int = 0  # lines of failures past MAX_DRAFTS
    _latest: dict[int, datetime | None] = field(default_factory=dict)  # per level, in the current log

    def start(self) -> None:
        self._latest.clear()

    def add(self, hit: Hit) -> None:
        mode = hit.recognition.mode
        assert mode is not None, "only recognised lines are hits"
        rank = level(mode)
        at = hit.when.at if hit.when else None
        if rank and self._explained(rank, at):
            self.consequences += 1
            return
        self._latest[rank] = at
        key = (mode.id, hit.recognition.distinguishing)
        if key not in self.drafts and len(self.drafts) >= MAX_DRAFTS:
            self.dropped += 1
            return
        self.drafts.setdefault(key, Draft(mode, key[1])).add(hit)

    def _explained(self, rank: int, at: datetime | None) -> bool:
        return any(lower < rank and (at is None or cause is None or abs(at - cause) <= WINDOW)
                   for lower, cause in self._latest.items())

    def result(self) -> list[Draft]:
        """The drafts in the order their failures were first seen."""
        return sorted(self.drafts.values(), key=_order)


def _order(draft: Draft) -> tuple[Any, ...]:
    first_log = next(iter(draft.logs))
    return (draft.detected_at is None, draft.detected_at or datetime.min, first_log, draft.logs[first_log].first)
