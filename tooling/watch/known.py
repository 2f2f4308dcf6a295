"""What a watch knows of the repository's incidents from one poll to the next.

Filing a failure asks three things of the incidents (:mod:`tooling.watch.occurrences`): which are
open, which failure each open one is, and which marks of watches they carry. A watch that follows a
run for weeks asks them at every poll that finds something, in a repository that may hold 10,000
incidents: :class:`KnownIncidents` reads each record file once and keeps what filing asks of it,
and then looks again only at what may have changed, so that a poll costs the same whatever the
repository holds:

- the files of the folders whose listing changed (:meth:`tooling.records.lookup.RecordNames.refresh`:
  one stat a folder), of them those added or replaced (a new inode: every write of tooling, and of
  an editor that saves by rename, replaces the file);
- the open incidents, and the record files that are links (a change of their target is not told
  in their folder), by their stat (a save in place, into the same file, moves its change time);
- the files changed within :data:`RACY` seconds of being read (a second edit within the file
  system's clock tick could leave the same stat), read again at each poll until they age;
- in turn, the other record files, by their stat, :data:`SWEEP` a second since the poll before:
  a resolved incident reopened by a save in place is noticed within ``files / SWEEP`` seconds
  (10 s at 10,000), where a reopen by ``tooling set`` or a save by rename is noticed at once (but
  for a file replaced twice between two polls whose second version got the first one's inode
  back, as ext4 hands freed inodes out again: the sweep notices that one too).

A poll's cost is then one stat a folder, a listing of each folder whose time another process
moved (a few ms per 10,000 names; the watch's own writes are taken into the listing it has, see
:meth:`KnownIncidents.wrote`) and a few stats and reads.

Where the kernel tells what changes (inotify, a local file system), the folders are followed
(:class:`tooling.records.followed.FollowedNames`): a folder another process wrote into is not
listed again, its names told of are looked at (a save in place among them), and no file of it is
swept; a poll after another writer's change costs the same at 15 incidents and at 10,000.
"""
from __future__ import annotations

import itertools
import math
import os
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooling.records.followed import FollowedNames
from tooling.records.layout import record_stem
from tooling.records.load import load_within
from tooling.records.listing import RACY, Folder
from tooling.records.lookup import RecordNames
from tooling.rules.others import usable

SWEEP = 1000  # record files a second whose stat is looked at in turn, for saves in place
Stamp = tuple[int, int, int, int]  # inode, size, modification and change times (ns)


@dataclass
class Incident:
    """What filing asks of one incident record."""
    path: str
    id: str
    resolved: bool
    marks: dict[str, Any] | None  # its watch_polls, when a mapping
    data: dict[str, Any] | None  # the record, while it is open (which failure it is may be asked)
    keys: dict[Any, Any] = field(default_factory=dict)  # what was worked out from it, kept with it


@dataclass
class _Kept:
    stamp: Stamp | None  # None: racy, or no stat: read again at the next poll
    incident: Incident | None  # None: not an incident (another kind, or a file that does not load)


class KnownIncidents:
    """The incident records of the repository at ``root``, each read again only when it changed.
    ``follow``: its folders followed by their notifications (a reader that lives on; see :meth:`close`)."""

    def __init__(self, root: Path, *, follow: bool = True) -> None:
        self.root = root
        # the record folders' names, shared with the poll's writes
        self.names: RecordNames = FollowedNames(root) if follow else RecordNames(root)
        self._real = os.path.realpath(root)
        self._listed: dict[str, Folder] = {}  # each folder's listing as last gone through
        self._kept: dict[str, _Kept] = {}
        self._racy: set[str] = set()
        self._links: set[str] = set()  # record files that are links: their target's changes are told elsewhere
        self._open: dict[str, Incident] = {}
        self._marks: dict[str, Counter[str]] = {}  # a watch's id -> its marks the incidents carry, counted
        self._order: list[str] = []  # every record file of the folders not followed, for the sweep
        self._swept: tuple[int, float] | None = None  # where the sweep goes on, and when it last went

    def now(self) -> list[Incident]:
        """The open incidents as the files are now, in the order validate lists them."""
        folders = self.names.refresh()
        due = self._listed_again(folders)
        due.update(self.names.shipped, self._racy, self._open, self._links, self._sweep())
        trusted = (time.time() - RACY) * 1e9  # a change time before this is no racy one
        for path in due:
            self._check(path, trusted)
        rank = {folder.path: i for i, folder in enumerate(folders)}
        shipped = {path: len(folders) + i for i, path in enumerate(self.names.shipped)}
        return sorted(self._open.values(),
                      key=lambda i: (shipped.get(i.path, rank.get(os.path.dirname(i.path), -1)), i.path))

    @property
    def started(self) -> bool:
        """Whether :meth:`now` looked once already (the first look reads every record file)."""
        return self._swept is not None

    def wrote(self, paths: Iterable[Path]) -> None:
        """The record files at ``paths`` were just written by this reader: its next poll lists
        their folder again only if something else changed it (:meth:`RecordNames.wrote`), and
        reads them again (they are racy)."""
        self.names.wrote(paths)
        self._racy.update(self._listed_again(self.names.listing()))

    def carries(self, watch: str, mark: str) -> bool:
        """Whether an incident carries ``mark`` under ``watch`` (in ``watch_polls``)."""
        return self._marks.get(watch, Counter())[mark] > 0

    def _listed_again(self, folders: list[Folder]) -> set[str]:
        """The record files of the folders listed again since the last poll that are new or
        replaced (a new inode); those that went are forgotten."""
        due: set[str] = set()
        current = {folder.path: folder for folder in folders}
        for path, old in self._listed.items():
            if path not in current:
                for gone in old.records:
                    self._forget(gone)
        for folder in folders:
            old = self._listed.get(folder.path)
            if old is folder:  # not listed again: nothing was added, removed or replaced in it
                continue
            if old is not None and folder.after == old.serial:  # listed against what was gone through
                changed, gone = folder.changed, folder.gone
            else:
                was = old.inodes if old is not None else {}
                changed = {n for n, i in folder.inodes.items() if was.get(n) != i}
                gone = was.keys() - folder.inodes.keys()
            for name in gone:
                self._forget(os.path.join(folder.path, name))
            due.update(os.path.join(folder.path, n) for n in changed if record_stem(n) is not None)
        if [f.serial for f in folders] != [f.serial for f in self._listed.values()]:
            self._order = list(itertools.chain.from_iterable(folder.records for folder in folders
                                                             if not self._followed(folder.path)))
        self._listed = current
        return due

    def _followed(self, path: str) -> bool:
        """Whether every change in the folder at ``path`` is told (a save in place too): no sweep."""
        return self.names.followed(path)

    def close(self) -> None:
        """Stop following the folders (the watch ends)."""
        self.names.close()

    def _sweep(self) -> list[str]:
        """The next record files in turn: as many as SWEEP a second since the poll before."""
        at = time.monotonic()
        start, last = self._swept if self._swept is not None else (0, None)
        count = len(self._order) if last is None else min(len(self._order), math.ceil((at - last) * SWEEP))
        start = start % len(self._order) if self._order else 0
        self._swept = (start + count, at)
        return self._order[start:start + count] + self._order[:max(0, start + count - len(self._order))]

    def _check(self, path: str, trusted: float) -> None:
        """Read the file at ``path`` again if its stat changed (or may have: racy, or none)."""
        try:
            info = os.stat(path)
        except OSError:  # gone, or a link to nothing: reading says what it is
            stamp = None
        else:
            stamp = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        kept = self._kept.get(path)
        if kept is not None and stamp is not None and kept.stamp == stamp:
            return
        self._note(path, self._read(path))
        if os.path.islink(path):  # its target's changes are told in the target's folder, if at all
            self._links.add(path)
        else:
            self._links.discard(path)
        if stamp is not None and stamp[3] < trusted:
            self._kept[path].stamp = stamp
            self._racy.discard(path)
        else:
            self._racy.add(path)

    def _note(self, path: str, incident: Incident | None) -> None:
        """Keep ``incident`` as what the file at ``path`` holds now (None: no incident, or no file)."""
        kept = self._kept.get(path)
        if kept is not None and kept.incident is not None:
            for watch, mark in (kept.incident.marks or {}).items():
                self._marks[watch][str(mark)] -= 1
        if incident is not None:
            for watch, mark in (incident.marks or {}).items():
                self._marks.setdefault(watch, Counter())[str(mark)] += 1
        self._kept[path] = _Kept(None, incident)
        if incident is not None and not incident.resolved:
            self._open[path] = incident
        else:
            self._open.pop(path, None)

    def _forget(self, path: str) -> None:
        if path in self._kept:
            self._note(path, None)
            del self._kept[path]
        self._racy.discard(path)
        self._links.discard(path)

    def _read(self, path: str) -> Incident | None:
        data = load_within(path, self._real).data
        if not usable(data) or data["kind"] != "incident":
            return None
        resolved = data.get("status") == "resolved"
        marks = data.get("watch_polls")
        return Incident(path, data["id"], resolved, marks if isinstance(marks, dict) else None,
                        None if resolved else data)
