"""What a flagged line becomes: a hit in the draft book, at its time, on its nodes and ranks.

:class:`Recorder` is the lowest layer of the scan's :class:`~tooling.logs.scan.Scanner`: it holds
where the scan is in its log (:attr:`~Recorder.line`, the :class:`~tooling.logs.timeline.Timeline`)
and adds hits to the :class:`~tooling.logs.draft_book.DraftBook`: a line that names a failure, the
lines a traceback's preamble told of it, torchrun's summary of the ranks that died with it, and
what only the numbers show (:mod:`tooling.logs.sampling`). Telling which lines those are is
:mod:`tooling.logs.reader`'s; reading the log chunk by chunk is :mod:`tooling.logs.scan`'s.
"""
from __future__ import annotations

from datetime import datetime

from tooling.catalogue.recognise import Recognition
from tooling.logs import blocks
from tooling.logs.chunks import Chunks
from tooling.logs.context import context
from tooling.logs.draft_book import DraftBook
from tooling.logs.drafts import Hit
from tooling.logs.flagged import Flagged, clean, placed, recognise_line
from tooling.logs.sampling import recognition as found_as
from tooling.logs.spikes import HANG, SeriesFinding
from tooling.logs.timeline import Moment, Timeline
from tooling.logs.unknown import UNCLASSIFIED, Episodes


class Recorder:
    """Hits of one log (``chunks``) into ``book``, numbered from :attr:`line` on."""

    def __init__(self, chunks: Chunks, book: DraftBook, now: datetime) -> None:
        self.chunks, self.book = chunks, book
        self.timeline = Timeline(chunks, now)
        self.line = 1  # number of the line at the start of the buffer
        self.base = 0  # lines of the log before this file (files of a rotated log read one after the other)
        self.hits = 0
        self.deferrable = False  # whether the line at hand may wait for the next chunk
        self.episodes = Episodes()  # of the failures no mode names
        self.failed = 0  # the line of the latest failure a line named

    @property
    def now(self) -> datetime:
        return self.timeline.now

    @now.setter
    def now(self, value: datetime) -> None:
        self.timeline.now = value

    def _told(self, at: Flagged, recognition: Recognition, when: Moment, *, cut: bool = False, key: str = "") -> None:
        """A line of a traceback's preamble, a line of its failure (see LineReader._preamble), at
        its own time if it has one."""
        when = (at.where.when, None) if at.where.when and at.where.when.at else when
        self._add(at.line, at.text, at.text[at.where.message:], recognition, when, *placed(at.where),
                  cut=cut, key=key)

    def _hit(self, at: Flagged, recognition: Recognition, when: Moment, limit: int, skip: set[int], *,
             echo: bool = False) -> bool:
        """A line that names a failure, and torchrun's summary below it if it opens one; True: the
        summary runs past the buffer and the line must wait for the next chunk."""
        nodes, ranks = placed(at.where)
        summary = None
        if "ChildFailedError" in at.text:
            end = self.chunks.buffer.find(b"\n", at.start, limit)  # (none: the summary is past the buffer)
            summary = blocks.torchrun_summary(self.chunks.buffer, end + 1 if end >= 0 else limit, limit, self.now)
            if not summary.complete and self.deferrable:
                return True  # read again, whole, with the next chunk
            skip.update(summary.body)
            nodes, ranks = nodes + summary.hosts, ranks + summary.ranks
            when = (summary.when, None) if when[0] is None and summary.when else when
        self._add(at.line, at.text, at.text[at.where.message:], recognition, when, nodes, ranks, echo=echo)
        if summary is not None:
            self._ranks_died(summary, at.line, when)
        return False

    def _ranks_died(self, summary: blocks.Summary, line: int, when: Moment) -> None:
        """torchrun's summary: where each failed rank ran, and how it died ("exitcode  : -9": killed,
        most often for memory), a failure of its own when a mode owns that exit status."""
        for entry in summary.entries:
            if entry.hosts and entry.ranks:
                self.book.locate(self.chunks.name, entry.ranks[0], entry.hosts[0], entry.when.at if entry.when else None)
            died = recognise_line(entry.text)
            if died.mode is not None and entry.text:
                self._add(line + entry.lines, clean(entry.text), entry.text.strip(), died,
                          (entry.when, None) if entry.when else when, list(entry.hosts), list(entry.ranks))

    def _add(self, line: int, text: str, message: str, recognition: Recognition, when: Moment,
             nodes: list[str], ranks: list[int], *, echo: bool = False, cut: bool = False, key: str = "",
             evidence: tuple[str, ...] = ()) -> None:
        if not evidence:  # a line that names a failure (a finding of the numbers names none)
            self.hits, self.failed = self.hits + 1, line
        at = self.timeline.zoned(when[0], line) if when[0] else None
        if recognition.mode is not None and recognition.mode.id == UNCLASSIFIED:
            key = key or self.episodes.key_of(line, message)
        self.book.add(Hit(self.chunks.name, line, text, message, recognition, at, when[1],
                          tuple(dict.fromkeys(nodes)), tuple(dict.fromkeys(ranks)), echo, self.base + line, key, cut,
                          evidence))

    def _found(self, findings: list[SeriesFinding]) -> None:
        """What only the numbers show, drafted as any failure, its numbers as evidence."""
        for found in findings:
            if found.mode == HANG and self.failed > found.at.line:
                continue  # a failure in the gap: the run died and came back, no stall of its own
            at, text = found.at, clean(found.at.text)  # (cleaned only now: most samples never show)
            self._add(at.line, text, text[context(text, self.now).message:], found_as(found), (at.when, None), [], [],
                      evidence=tuple(clean(line) for line in found.evidence))
