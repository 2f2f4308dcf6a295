"""What a watch knows of the repository's incidents from one poll to the next.

Filing a failure asks two things of every incident (:mod:`tooling.watch.occurrences`): is it open,
and which failure is it; and which marks of watches it carries. A watch that follows a run for
weeks asks them at every poll that finds something, in a repository that may hold 10,000
incidents: :class:`KnownIncidents` reads each record file once and keeps what filing asks of it,
by the file's stat (inode, size, modification and change times). A file is read again
only when its stat changed: an atomic replace (every write of tooling) is a new inode, an edit in
place a new change time. A file changed within :data:`RACY` seconds of being read is read again at
the next poll too, as git does: a second edit within the file system's clock tick could leave
the same stat.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooling.records.layout import repository_files
from tooling.records.lookup import load_within
from tooling.rules.others import usable

RACY = 2.0  # seconds: a file changed this recently is not known by its stat alone
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


class KnownIncidents:
    """The incident records of the repository at ``root``, each read again only when it changed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._real = os.path.realpath(root)
        self._kept: dict[str, tuple[Stamp, Incident | None]] = {}

    def now(self) -> list[Incident]:
        """Every incident record as the files are now, in the order validate lists them."""
        trusted = (time.time() - RACY) * 1e9  # a change time before this is no racy one
        kept: dict[str, tuple[Stamp, Incident | None]] = {}
        found = []
        for path in repository_files(self.root):  # one stat a file: 10,000 in a few tens of ms
            try:
                info = os.stat(path)
            except OSError:  # gone, or a link to nothing: reading says what it is
                stamp = None
            else:
                stamp = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
            old = self._kept.get(path)
            incident = old[1] if old is not None and old[0] == stamp else self._read(path)
            if stamp is not None and stamp[3] < trusted:
                kept[path] = (stamp, incident)
            if incident is not None:
                found.append(incident)
        self._kept = kept
        return found

    def _read(self, path: str) -> Incident | None:
        data = load_within(path, self._real).data
        if not usable(data) or data["kind"] != "incident":
            return None
        resolved = data.get("status") == "resolved"
        marks = data.get("watch_polls")
        return Incident(path, data["id"], resolved, marks if isinstance(marks, dict) else None,
                        None if resolved else data)
