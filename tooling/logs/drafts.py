"""Drafts of incidents, one per distinct failure found in logs, built hit by hit in bounded memory.

A distinct failure is a failure mode with its distinguishing codes (see
:attr:`~tooling.catalogue.recognise.Recognition.distinguishing`; the words of a line, which tell
incidents apart, do not split a scan's lines: see :func:`failure`): two NCCL timeouts on two ranks
are one failure, two different CUDA errors are two. Lines that are only the aftermath of another
failure (:mod:`tooling.logs.aftermath`) are counted, not drafted. The drafts of one scan, and what
a log that goes on remembers of them, are :mod:`tooling.logs.draft_book`.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from datetime import datetime

from tooling.catalogue.modes import FailureMode
from tooling.catalogue.recognise import Recognition
from tooling.catalogue.signatures import normalise
from tooling.logs.context import When
from tooling.logs.unknown import CUT

MAX_SIGNATURES = 5  # distinct lines kept per draft; more only repeat the story
MAX_CODES, MAX_NAMES = 20, 1000  # codes, and nodes or ranks, kept per draft
MAX_EVIDENCE = 20  # lines of evidence kept per draft: the numbers of its first few findings
# Lines of one failure written closer together than this, by the log's own clock, are one
# occurrence of it (a watchdog timeout writes three lines, every rank writes its own); lines
# without a time are one occurrence each. tooling watch counts an incident's occurrences so, each
# failure's latest moment remembered from one poll to the next (tooling.logs.draft_book.DraftBook.seen):
# the count is the log's, not the polls'.
OCCURRENCE_GAP = 60.0  # seconds
# Where a draft's latest occurrences start, kept: what another reader of the log counted already
# is told by them (tooling.watch.counted); the latest are those two readers' polls share.
MAX_STARTS = 256
# "message" (the words of a line) tells incidents apart; but one failure writes lines of many
# words (a watchdog timeout: "Watchdog caught...", "Some NCCL operations have failed...",
# "what(): ..."), so within a scan only codes split the lines of a mode into failures.
WORDS = "message"


Key = tuple[str, tuple[str, ...]]  # a distinct failure: mode and distinguishing codes
Moment = tuple[str, float]  # when a line was written: ("at", a POSIX time) or ("uptime", seconds since boot)
Start = tuple[str, float]  # where an occurrence starts: its first line's Moment, or ("line", its number)


def failure(recognition: Recognition, template: str = "") -> Key:
    """The distinct failure a recognised line belongs to: its mode and distinguishing codes; for a
    failure no mode names, the template of its episode's first line (tooling.logs.unknown)."""
    mode = recognition.mode
    assert mode is not None, "only recognised lines are failures"
    if template:
        return mode.id, (template,)
    return mode.id, tuple(value for kind in mode.distinguish if kind != WORDS
                          for value in recognition.codes.of(kind)[:1])


@dataclass(frozen=True)
class Hit:
    """One log line that names a failure, with what the log says around it."""
    log: str
    line: int
    text: str  # the line, verbatim but for control characters (see tooling.logs.flagged.clean)
    message: str  # the text after the prefixes that say when, where and who
    recognition: Recognition
    when: When | None
    time_from: int | None  # the line whose time it has, when not its own
    nodes: tuple[str, ...] = ()
    ranks: tuple[int, ...] = ()
    echo: bool = False  # it passes on an error a line of its own may have said (NCCL's return trace)
    seq: int = 0  # its number in the log as one (a rotated log's files together): distances are counted in it
    key: str = ""  # of a failure no mode names: its episode's template (tooling.logs.unknown)
    cut: bool = False  # the log ends inside its traceback
    evidence: tuple[str, ...] = ()  # what shows a failure no line says: numbers (tooling.logs.series), frames


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
    last_at: datetime | None = None  # of the latest hit
    occurrences: int = 0  # see OCCURRENCE_GAP
    _moment: Moment | None = field(default=None, repr=False)  # of the latest hit
    frozen: bool = False  # its signatures are those it was filed with (see tooling.logs.draft_book.Seen)
    cut: bool = False  # the log ends inside its traceback (tooling.logs.unknown.CUT)
    evidence: list[str] = field(default_factory=list)  # of its hits, MAX_EVIDENCE at most
    starts: deque[Start] = field(default_factory=lambda: deque(maxlen=MAX_STARTS))  # of its latest occurrences

    @classmethod
    def going_on(cls, mode: FailureMode, codes: tuple[str, ...], signatures: tuple[str, ...],
                 forms: tuple[str, ...], moment: Moment | None) -> Draft:
        """The draft of a failure an earlier take of a log that goes on saw: the signatures it was
        first drafted with (frozen), and ``moment``, when its latest line was written."""
        return cls(mode, codes, list(signatures), list(forms), _moment=moment, frozen=True)

    @property
    def moment(self) -> Moment | None:
        """When its latest line was written, by the log's clock (see OCCURRENCE_GAP)."""
        return self._moment

    def add(self, hit: Hit) -> None:
        """One more line of this failure; ``occurrences`` grows when it is not within
        OCCURRENCE_GAP of the line before it (of this draft, or ``_moment`` it started with)."""
        self.count += 1
        self.cut = self.cut or hit.cut
        self.evidence += [text for text in hit.evidence if text not in self.evidence][:MAX_EVIDENCE - len(self.evidence)]
        moment, last = _moment(hit), self._moment
        if moment is None or last is None or moment[0] != last[0] or abs(moment[1] - last[1]) > OCCURRENCE_GAP:
            self.occurrences += 1
            self.starts.append(moment or ("line", hit.line))
        self._moment = moment
        self.last_at = hit.when.at if hit.when and hit.when.at else self.last_at
        lines = self.logs.setdefault(hit.log, Lines(hit.line, hit.line))
        lines.last, lines.count = hit.line, lines.count + 1
        if len(self.forms) < MAX_SIGNATURES and not self.frozen:  # normalised only while there is room: it costs
            form = normalise(hit.message)  # two lines of one form say the same thing
            if form not in self.forms:
                self.forms.append(form)
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
        notes = [CUT] if self.cut else []
        if hit is None or when is None or when.at is None:
            return notes + ["the log gives no absolute time for it" +
                            (" (only seconds since boot)" if when and when.uptime is not None else "")]
        if hit.time_from is not None:
            notes.append(f"its time is that of {_line(hit.time_from, hit.log)}, the last timestamped line before it")
        if when.zone_assumed and when.zone_from is not None:
            notes.append(f"its line gives no time zone: taken as {when.at.strftime('%z')[:3]}:{when.at.strftime('%z')[3:]}, "
                         f"the zone of {_line(when.zone_from, hit.log)}")
        elif when.zone_assumed:
            notes.append("the log gives no time zone: taken as UTC")
        if when.year_assumed:
            notes.append(f"the log gives no year: taken as {when.at.year}")
        return notes


def _line(number: int, log: str) -> str:
    """A line of a log, in words (a number below 1: a line of a file the log was before it was
    rotated, whose lines are numbered apart: tooling.logs.timeline.Timeline.follow)."""
    return f"line {number} of {log}" if number > 0 else f"a line of {log} before it was rotated"


def _moment(hit: Hit) -> Moment | None:
    """When a line was written, by the log's clock: a time, or seconds since boot (dmesg)."""
    when = hit.when
    if when is not None and when.at is not None:
        return "at", when.at.timestamp()
    return ("uptime", when.uptime) if when is not None and when.uptime is not None else None


def _earlier(hit: Hit, than: Hit) -> bool:
    mine, theirs = (h.when.at if h.when else None for h in (hit, than))
    return mine is not None and (theirs is None or mine < theirs)
