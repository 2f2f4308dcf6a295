"""A record folder as listed: every name in it with its inode, the folders under it that are
walked, its record files, and what changed since the listing before (names added, replaced or
removed), with the listing's updates that need no listing again: a few names the reader wrote, or
the names the kernel told of (:mod:`tooling.records.followed`).

Whether a listing is still the folder's is told by its stamp (inode, modification time): a name
added, removed or replaced moves it. A folder changed within :data:`RACY` seconds of being listed
is not known by its stamp alone (a coarse clock leaves the same time for a second change within a
tick); a stamp the reader's own writes left is taken as is for :data:`VOUCHED` seconds after the
folder's last real listing. The reader that keeps listings and refreshes them is
:class:`tooling.records.lookup.RecordNames`.
"""
from __future__ import annotations

import bisect
import itertools
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import attrgetter, methodcaller, ne

from tooling.records.layout import RECORD_NAME, highest_numbered, record_stem
from tooling.records.load import no_collection

RACY = 2.0  # seconds: a file or folder changed this recently is not known by its stat alone
VOUCHED = 10.0  # seconds after its last listing that a folder's time set by the reader's own writes is taken as is
_SERIALS = itertools.count()


@dataclass
class Folder:
    """A record folder as listed: every name in it with its inode, the record files among them."""
    path: str
    stamp: tuple[int, int]  # inode, modification time (ns): moved by every name added, removed or replaced
    trusted: bool  # changed more than RACY seconds before it was listed: a later change moves its stamp
    inodes: dict[str, int]  # every name in it (the inode its entry names: a replaced file has a new one)
    below: list[str]  # the folders under it that are walked: not hidden, not links, by name
    serial: int = field(default_factory=lambda: next(_SERIALS))  # which listing this is, of all
    after: int | None = None  # the serial of the listing before this one, which the next two are against
    changed: frozenset[str] = frozenset()  # names added or replaced since then
    gone: frozenset[str] = frozenset()  # names removed since then
    _records: list[str] | None = field(default=None, repr=False)
    listed: float = field(default_factory=time.monotonic)  # when it was last really listed
    own: bool = False  # its stamp is the one the reader's own writes left (see RecordNames.wrote)
    unlisted: bool = False  # not listed (a one-shot reader's folder without sub-folders): names looked up one by one
    _highest: dict[str, int] = field(default_factory=dict, repr=False)  # prefix -> highest number named

    def holds(self, name: str) -> bool:
        """Whether an entry of the folder is named ``name``."""
        return os.path.lexists(os.path.join(self.path, name)) if self.unlisted else name in self.inodes

    def highest(self, prefix: str) -> int:
        """The highest N of its names ``<prefix>N.yaml``, worked out once a listing."""
        if prefix not in self._highest:
            self._highest[prefix] = highest_numbered(self.inodes, prefix)
        return self._highest[prefix]

    def current(self, stamp: tuple[int, int]) -> bool:
        """Whether this listing is the folder's as it is now, of stamp ``stamp``, without listing it."""
        if stamp != self.stamp:
            return False
        return self.trusted or (self.own and time.monotonic() - self.listed < VOUCHED)

    @property
    def records(self) -> list[str]:
        """Paths of its entries named like record files, by name (as validate lists them), made
        when first asked (a lookup by name needs none), each in C: no Python call a name."""
        if self._records is None:
            self._records = list(map((self.path + os.sep).__add__, sorted(filter(RECORD_NAME.match, self.inodes))))
        return self._records

    def patched(self, stamp: tuple[int, int], found: dict[str, int], gone: Iterable[str] = (), *,
                own: bool = False) -> Folder:
        """This listing with the entries ``found`` (name -> inode) added or replaced and ``gone``
        removed, of the folder's stamp ``stamp`` now, without listing it: its sorted record paths
        and highest numbers updated, not made again. ``own``: the names are the reader's own
        writes (see RecordNames.wrote), the folder's last real listing still this one's."""
        inodes = {**self.inodes, **found}
        for name in gone:
            del inodes[name]
        added = [name for name in found if name not in self.inodes]
        return Folder(self.path, stamp, False, inodes, self.below, after=self.serial, changed=frozenset(found),
                      gone=frozenset(gone), _records=_updated(self, added, gone),
                      listed=self.listed if own else time.monotonic(), own=own,
                      _highest=_still_highest(self, added, gone))


def list_folder(path: str, info: os.stat_result, listed_at: int, old: Folder | None) -> Folder:
    """The folder at ``path`` (of stat ``info``) listed now; ``old``: its listing before, whose
    sorted record names are reused where they did not change, and which names changed since is
    worked out (a folder of 10,000 records: a few ms, no file looked at)."""
    with no_collection(), os.scandir(path) as listing:  # 10,000 entries, no cycle among them
        entries = list(listing)
    inodes = {entry.name: entry.inode() for entry in entries}
    # the folders among them picked in C (the entry's type, no stat): one a folder is looked at in Python
    folders = map(attrgetter("name"), filter(methodcaller("is_dir", follow_symlinks=False), entries))
    below = sorted(name for name in folders if not name.startswith("."))
    stamp = (info.st_ino, info.st_mtime_ns)
    trusted = stamp[1] < listed_at - RACY * 1e9
    if old is None:
        return Folder(path, stamp, trusted, inodes, below)
    was = old.inodes
    changed = _changed(inodes, was)
    added = changed - was.keys()
    # as many names went as the count says: none in the common case (a file replaced, one added)
    gone = frozenset(was.keys() - inodes.keys()) if len(was) + len(added) != len(inodes) else frozenset()
    return Folder(path, stamp, trusted, inodes, below, after=old.serial, changed=changed, gone=gone,
                  _records=_updated(old, added, gone), _highest=_still_highest(old, added, gone))


def _still_highest(old: Folder, added: Iterable[str], gone: Iterable[str]) -> dict[str, int]:
    """``old``'s highest numbers with ``added`` names too (worked out again when the highest went)."""
    if not (added or gone):
        return dict(old._highest)
    return {prefix: max(highest, highest_numbered(added, prefix)) for prefix, highest in old._highest.items()
            if highest_numbered(gone, prefix) < highest}


def _updated(old: Folder, added: Iterable[str], gone: Iterable[str]) -> list[str] | None:
    """``old``'s sorted record paths with a few names added and removed (None: not made yet)."""
    records = old._records
    if records is None or not (added or gone):
        return records
    records = list(records)  # a few names came or went: the sorted list updated, not made again
    for name in gone:
        if record_stem(name) is not None:
            del records[bisect.bisect_left(records, os.path.join(old.path, name))]
    for name in added:
        if record_stem(name) is not None:
            bisect.insort(records, os.path.join(old.path, name))
    return records


def _changed(inodes: dict[str, int], was: dict[str, int]) -> frozenset[str]:
    """The names of ``inodes`` new or of another inode than in ``was``, compared in C (no
    Python call a name)."""
    if inodes == was:
        return frozenset()
    return frozenset(itertools.compress(inodes, map(ne, inodes.values(), map(was.get, inodes))))


def list_unlisted(folder: Folder) -> Folder:
    """An unlisted folder listed now; one that went meanwhile holds nothing (as RecordNames._visit finds it)."""
    try:
        return list_folder(folder.path, os.stat(folder.path), time.time_ns(), None)
    except OSError:
        return Folder(folder.path, folder.stamp, False, {}, [])
