"""One log followed by name, like ``tail -F``: rotated, truncated, removed and created again.

At every poll, for the name:

1. the file read last is checked: emptied or rewritten (copytruncate, ``: > log``), its lines not
   yet read are taken from the copy beside it when there is one, and it is read from its start.
   It is shorter than what was read, or its first bytes or those before where it was read to
   changed, or a copy of it appeared beside it that it does not go on as (it grew back, under
   the same banner, past where it was read: tooling.watch.files);
2. the file the name holds now is taken, whatever is still to be read (a file not read yet may
   be rotated away before the next poll): when it is another, or none, the current file joins
   the older ones (a writer may still finish a line in it); a name without a file is looked
   for again (a log that appears later);
3. older files (rotated away) are read on, oldest first, until each has been quiet for
   :data:`~tooling.watch.tail.SETTLE` seconds and is read to its very end (a partial last line
   included: nothing will complete it), then closed;
4. the current file is read, once the older ones are read to their end for now (a budget that
   ran out leaves it for the next poll: the files of a name are read in the order they were
   written, each going on from the one before it: its times and line numbers, Scanner.follow).

After a restart, each saved file is found again: under the name (same inode, same first bytes),
renamed beside it (by inode), or as the copy copytruncate left (by its first bytes).
"""
from __future__ import annotations

import os
import stat
from datetime import datetime
from pathlib import Path

from tooling.errors import UserError
from tooling.logs.draft_book import DraftBook, Seen
from tooling.logs.drafts import Key
from tooling.logs.scan import Scanner
from tooling.watch.files import Position, copy_of, find_rotated, rotated_beside
from tooling.watch.tail import OpenFile

BUDGET = 64 << 20  # bytes read per file and poll: a backlog is filed (and its offset saved) in steps
MAX_OLDER = 4  # rotated files read on at once; more means rotation faster than anyone writes


class FollowedLog:
    def __init__(self, path: Path, *, saved: list[Position], lines: int, seen: dict[Key, Seen] | None = None,
                 beside: set[tuple[int, int]] | None = None) -> None:
        self.path, self.name = path, str(path)
        self.book = DraftBook(seen=dict(seen or {}))
        self.current: OpenFile | None = None
        self.older: list[OpenFile] = []
        self.lines = lines  # read from this name, every file together
        self.progress: tuple[int, str] | None = None  # the last progress line this poll read
        self.notices: list[str] = []  # for the person running it: what may be lost, and why
        self._saved: list[Position] | None = saved
        self.beside = beside  # rotated files beside it at the last poll (None: before the first)
        self._last: Scanner | None = None  # of the file read last: a new file's lines go on from it

    def poll(self, *, now: datetime, budget: int = BUDGET) -> bool:
        """Read what the name's files hold now; True when a budget ran out (more to read)."""
        self.progress = None
        if self._saved is not None:
            self._resume(self._saved, now)
            self._saved = None
        appeared = self._appeared()
        if self.current is not None:
            truncated = self.current.truncated()
            copy = copy_of(self.current.fd, self.current.read_to(), appeared) if appeared and not truncated else None
            if truncated or copy is not None:
                self._truncated(now, copy)
        self._take(now)
        for old in list(self.older):
            if self._read_older(old, now, budget):
                return True  # its lines come before the next file's: those wait for the next poll
        while self.current is not None:
            more = self._read(self.current, now, budget)
            if more or not self._moved():
                return more
            self._take(now)
        return False

    def settled(self) -> bool:
        """Whether its writer paused: every file read to its end, and quiet (tail.SETTLE)."""
        return not self.older and (self.current is None or self.current.tail.eof)

    def positions(self) -> list[Position]:
        return [f.position() for f in [*self.older, *([self.current] if self.current else [])]]

    def close(self) -> None:
        for file in [*self.older, *([self.current] if self.current else [])]:
            file.close()

    def _read(self, file: OpenFile, now: datetime, budget: int, *, final: bool = False) -> bool:
        if file.after is not None:  # its first read: its lines go on from the file before it
            file.scanner.follow(file.after)
            file.after = None
        lines, more = file.read(now=now, budget=budget, final=final)
        self._last = file.scanner
        self.lines += lines
        self.progress = file.scanner.progress or self.progress
        return more

    def _read_older(self, old: OpenFile, now: datetime, budget: int) -> bool:
        more = self._read(old, now, budget)
        if not more and (old.tail.final or old.quiet() or len(self.older) > MAX_OLDER):
            more = self._read(old, now, budget, final=True)
            if not more and old.drained():
                old.close()
                self.older.remove(old)
        return more

    def _moved(self) -> bool:
        """Whether the name holds another file than the current one now, or none."""
        assert self.current is not None
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return True
        return (info.st_dev, info.st_ino) != _identity(self.current.fd)

    def _take(self, now: datetime) -> None:
        """Take the file the name holds now, at every poll (one not read yet may be rotated away
        before it is): the one taken before joins the older ones, read on before it."""
        if self.current is None:
            self._open(now, after=self._last)
        elif self._moved():
            before = self.current
            self.older.append(before)
            self.current = None
            self._open(now, after=before.scanner)

    def _open(self, now: datetime, at: Position | None = None, *, after: Scanner | None = None) -> None:
        try:
            if not stat.S_ISREG(os.stat(self.path).st_mode):
                return
            self.current = OpenFile(self.path, self.name, self.book, now, at)
            self.current.after = after
        except FileNotFoundError:
            return
        except PermissionError:
            raise UserError(f"{self.name}: permission denied; expected a log this user may read") from None

    def _appeared(self) -> list[Path]:
        """Files beside the log since the last poll (none at the first: those were there before)."""
        now = rotated_beside(self.path)
        new = [] if self.beside is None else [path for key, path in now.items() if key not in self.beside]
        self.beside = set(now)
        return new

    def _truncated(self, now: datetime, copy: Path | None = None) -> None:
        """Emptied or rewritten: what was not read yet is in the copy beside it (``copy``, when it
        is known already), if anywhere."""
        assert self.current is not None
        # (what it was read with, or if it was not read yet, what it was to be read on from)
        was, before = self.current.read_to(), self.current.after or self.current.scanner
        copied = self._copy(copy, was, now, before) if copy else self._adopt(was, now, moved=False, after=before)
        if copied is None:
            self._rewritten(was)
        self.current.restart(now)
        self.current.after = copied.scanner if copied else before

    def _resume(self, saved: list[Position], now: datetime) -> None:
        """Find each file the offset file names, and go on reading it where it was left."""
        for position in saved:
            try:
                here = position.same_file(os.stat(self.path))
            except FileNotFoundError:
                here = False
            if here and self.current is None:
                self._open(now, position)
                if self.current is None or not self.current.truncated():
                    continue
                self.current.close()
                self.current = None
                if not self._adopt(position, now, moved=False):
                    self._rewritten(position)
            elif not self._adopt(position, now, moved=True) and not self._adopt(position, now, moved=False):
                self.notices.append(f"{self.name}: the file read up to line {position.line - 1} is no longer "
                                    "there (removed or compressed); lines written to it after that were not read")

    def _rewritten(self, position: Position) -> None:
        self.notices.append(f"{self.name}: emptied or rewritten after line {position.line - 1}, and no copy of "
                            "it beside it; reading it from its start")

    def _adopt(self, position: Position, now: datetime, *, moved: bool, after: Scanner | None = None) -> OpenFile | None:
        """Read on, among the older files, the file ``position`` was in, found beside the log
        renamed (``moved``) or copied (copytruncate: the copy no longer grows)."""
        found = find_rotated(self.path, position, moved=moved)
        if found is None:
            return None
        if not moved:
            return self._copy(found, position, now, after)
        self.older.append(OpenFile(found, self.name, self.book, now, position))
        return self.older[-1]

    def _copy(self, path: Path, position: Position, now: datetime, after: Scanner | None) -> OpenFile:
        """Read on, to its end, the copy copytruncate made of a file read up to ``position``: the
        file it was, when it was emptied (``after``: the scanner that read it until then)."""
        copy = OpenFile(path, self.name, self.book, now, position, final=True)
        copy.after = after
        self.older.append(copy)
        return copy


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino
