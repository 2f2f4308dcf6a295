"""When the lines of a log were written, as far as the log says (for :class:`tooling.logs.scan.Scanner`).

A line's time is its own, else that of the nearest line above it that has one, at most
:data:`LOOK_BACK` lines up (a traceback's last line has no time; the step log above it does). A
time without a zone is read in the zone of the first line that gives one among the log's first
:data:`ZONE_SAMPLE` lines, from that line on (a log whose lines mostly give none, glog or syslog,
often has some that do: Python's logging with ``%z``). Both only look up the log, never down, so
a log read in pieces (``tooling watch``, poll by poll) or in files (a rotated log:
:meth:`Timeline.follow`) gets the times it gets read whole.
"""
from __future__ import annotations

from datetime import datetime, tzinfo

from tooling.logs import blocks
from tooling.logs.chunks import Chunks
from tooling.logs.context import When, line_time, log_zone

LOOK_BACK = 50  # lines searched above a line without a time for the time it happened at
ZONE_SAMPLE = 1000  # lines at the start of a log looked at for the time zone its times are in
ZONE_BYTES = 256 << 10  # and at most so many bytes

Known = tuple[int, int, When]  # a timestamped line: (its offset in the log, its number, its time)
Moment = tuple[When | None, int | None]  # a line's time, and the number of the line it is from (None: its own)


class Timeline:
    """The times of the lines of ``chunks``, read chunk by chunk (see the module's docstring)."""

    def __init__(self, chunks: Chunks, now: datetime) -> None:
        self.chunks, self.now = chunks, now
        self.last: Known | None = None  # the latest timestamped line known (its offset may precede the buffer)
        self.zone: tuple[int, tzinfo] | None = None  # (line, zone): zoneless times from that line on

    def sample(self, line: int, usable: int) -> None:
        """Look for the zone among the lines of a chunk whose first line is ``line``, while it is
        not found and the chunk is among the first lines of the log."""
        offset = self.chunks.offset
        if self.zone is not None or line > ZONE_SAMPLE or offset >= ZONE_BYTES:
            return
        head = bytes(self.chunks.buffer[:min(usable, ZONE_BYTES - offset)]).decode("utf-8", "replace")
        wanted = ZONE_SAMPLE - line + 1
        found = log_zone(head.split("\n", wanted)[:wanted], self.now)
        if found is not None:
            self.zone = (line - 1 + found[0], found[1])

    def zoned(self, when: When, line: int) -> When:
        """``when``, of line ``line``, in the log's zone if it gives none and the zone is known there."""
        return when.in_zone(self.zone if self.zone is not None and self.zone[0] <= line else None)

    def of(self, own: When | None, start: int, line: int) -> Moment:
        """The time of the line at ``start`` of the buffer (number ``line``, its own time ``own``)
        and the line it is from (None: its own)."""
        if own is not None and own.at is not None:
            self.last = (self.chunks.offset + start, line, own)
            return own, None
        self.last = self._above(start, line)
        return (self.last[2], self.last[1]) if self.last else (own, None)

    def chunk_done(self, done: int, line: int) -> None:
        """The buffer's first ``done`` bytes are read, up to line ``line``: what the lines of the
        next chunk inherit."""
        self.last = self._above(done, line)

    def _above(self, end: int, line: int) -> Known | None:
        """The time the line at ``end`` (number ``line``) inherits: of the last line above it
        with a time (:func:`~tooling.logs.context.line_time`), or of :attr:`last`, whichever is
        lower, within LOOK_BACK lines."""
        known = self.last
        return self._search(end, line, max(0, known[0] - self.chunks.offset) if known else 0)

    def follow(self, before: Timeline, ended: int, line: int) -> None:
        """Go on from ``before``, the timeline of the file this one's log was read in before it was
        rotated, read up to line ``ended`` of it; this one's next line is ``line``. (Line numbers
        are each file's: what is carried is how far up a line is.)"""
        if before.zone is not None:  # the log's zone, found above this file's own lines
            self.zone = (line - (ended - before.zone[0]), before.zone[1])
        if self.last is None and before.last is not None:
            self.last = (-1, line - (ended - before.last[1]), before.last[2])

    def _search(self, end: int, line: int, lo: int) -> Known | None:
        """The last timestamped line among the LOOK_BACK lines that end at ``end`` (above line
        ``line``), stopping at ``lo``, where the line of :attr:`last` starts (or the buffer, which
        it precedes: it is taken if it is within LOOK_BACK lines)."""
        for back in range(1, LOOK_BACK + 1):
            if end <= lo:
                known = self.last
                return known if known is not None and line - known[1] <= LOOK_BACK else None
            begin = self.chunks.buffer.rfind(b"\n", 0, end - 1) + 1
            found = line_time(blocks.decode(self.chunks.buffer, begin, end)[0], self.now)
            if found is not None and found.at is not None:
                return self.chunks.offset + begin, line - back, found
            end = begin
        return None
