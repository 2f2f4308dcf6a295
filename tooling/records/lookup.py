"""Finding a repository's record files by name, without reading the others.

A record file's name is its id (an overlay's is ``<id>.<lang>``), so the files that may hold the
record ``X`` are those named ``X.yaml`` or ``X.yml`` anywhere under the record folders: one walk
of the folders' names (no file is opened) answers that for any number of ids. A write checks its
one record against the few files its rules name this way (:mod:`tooling.rules.others`) instead of
loading every record of the repository. Reading a file found so is
:func:`tooling.records.load.load_within`: the same reading as ``tooling validate``'s, which never
follows a link out of the repository.

A reader that lives on (``tooling watch``) keeps its :class:`RecordNames` and calls
:meth:`RecordNames.refresh`: only the folders whose stat changed are listed again. A name added,
removed or replaced (every write of tooling is an atomic replace) moves its folder's modification
time; a folder changed within :data:`RACY` seconds of being listed is listed again at the next
refresh too, as git does with files: on a file system whose times are coarse (a second, two on
FAT), a second change within the same tick leaves the same time.

The reader's own writes move its folders' times too, and listing a folder of 10,000 names takes
a few ms (the system call alone): :meth:`RecordNames.wrote` takes the names it wrote into the
listing it has and the time they left, so that the next refresh need not list the folder again.
What the time alone cannot tell apart from its own writes (another process writing into the
folder between the refresh before them and the stat after them, or within the tick of that
stat) is found by listing it again at least every :data:`VOUCHED` seconds while it writes.
"""
from __future__ import annotations

import bisect
import itertools
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import attrgetter, methodcaller, ne
from pathlib import Path

from tooling.records.kinds import RECORD_DIRS
from tooling.records.layout import RECORD_NAME, SUFFIXES, highest_numbered, record_stem, shipped_records
from tooling.records.load import no_collection
from tooling.records.shipped import shipped_root

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


def _listed(path: str, info: os.stat_result, listed_at: int, old: Folder | None) -> Folder:
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


class RecordNames:
    """The names under the record folders of ``root`` and the shipped records it reads, listed
    when first asked, and again (where a folder changed) at each :meth:`refresh`.

    ``lazy`` (a one-shot reader: ``tooling set``, a reporter write): a folder without sub-folders
    is not listed (a few ms at 10,000 names) but asked for the names looked up, one stat each, and
    listed only when its records are asked for (:meth:`within`). A folder's link count says it has
    no sub-folder (2) on a file system that counts them, which the repository's root tells: its
    count is 2 plus its own sub-folders (ext4, XFS, tmpfs; btrfs and overlayfs say 1: all listed)."""

    def __init__(self, root: Path, *, lazy: bool = False) -> None:
        self.root = root
        self._folders: list[Folder] | None = None  # in walk order (as repository_files walks them)
        self.shipped: list[str] = []  # the shipped ladders and stack it does not override
        self._counted: int | None = _links_counted(root) if lazy else None  # the device whose links count

    def listing(self) -> list[Folder]:
        """The folders as last listed (listed now if never), with the reader's own writes since."""
        return self._folders if self._folders is not None else self.refresh()

    def refresh(self) -> list[Folder]:
        """The folders as they are now: one stat a folder, listed again only where it changed."""
        kept = {folder.path: folder for folder in self._folders or []}
        folders: list[Folder] = []
        for top in RECORD_DIRS:
            if (self.root / top).is_dir():
                self._visit(str(self.root / top), kept, folders)
        self._folders = folders
        # listed after its own, as repository_files lists them
        self.shipped = [str(path) for path in shipped_records(self.root)]
        return folders

    def _visit(self, path: str, kept: dict[str, Folder], folders: list[Folder]) -> None:
        """``path`` and the folders under it, top-down, as os.walk goes (an unreadable one is skipped)."""
        listed_at = time.time_ns()  # before the stat: a change after it has a later time, or is racy
        try:
            info = os.stat(path)
            folder = kept.get(path)
            if folder is None and info.st_dev == self._counted and info.st_nlink == 2:
                folder = Folder(path, (info.st_ino, info.st_mtime_ns), False, {}, [], unlisted=True)
            else:
                folder = self._current(path, info, listed_at, folder)
        except OSError:
            return
        folders.append(folder)
        for name in folder.below:
            self._visit(os.path.join(path, name), kept, folders)

    def _current(self, path: str, info: os.stat_result, listed_at: int, folder: Folder | None) -> Folder:
        """The folder at ``path`` (of stat ``info``) now: ``folder``, its listing before, while its stamp says so."""
        return folder if folder is not None and folder.current((info.st_ino, info.st_mtime_ns)) \
            else _listed(path, info, listed_at, folder)

    def wrote(self, paths: Iterable[Path]) -> None:
        """Take the record files at ``paths``, just written (replaced or created) by the reader
        since its last refresh, into the listing, with the time they left on their folder: the next
        refresh lists the folder again only if something else moved that time (or VOUCHED seconds
        after its last listing, for what hid behind the reader's own writes)."""
        by_folder: dict[str, list[str]] = {}
        for path in paths:
            by_folder.setdefault(str(Path(path).parent), []).append(Path(path).name)
        for index, folder in enumerate(self._folders or []):
            names = by_folder.get(folder.path)
            if names is None:
                continue
            try:
                info = os.stat(folder.path)
                inodes = {name: os.stat(os.path.join(folder.path, name), follow_symlinks=False).st_ino
                          for name in names}
            except OSError:  # gone meanwhile: the next refresh says what is there
                continue
            added = [name for name in inodes if name not in folder.inodes]
            self._folders[index] = Folder(  # type: ignore[index]
                folder.path, (info.st_ino, info.st_mtime_ns), False, {**folder.inodes, **inodes},
                folder.below, after=folder.serial, changed=frozenset(inodes), _records=_updated(folder, added, ()),
                listed=folder.listed, own=True, _highest=_still_highest(folder, added, ()))

    def highest(self, directory: str, prefix: str) -> int | None:
        """The highest N of the names ``<prefix>N.yaml`` in the folder ``directory`` (relative to
        the root) as last listed; None when it was not listed."""
        own = os.path.join(str(self.root), directory)
        return next((f.highest(prefix) for f in self.listing() if f.path == own and not f.unlisted), None)

    def files(self, stem: str) -> list[str]:
        """The record files named ``stem`` plus a record suffix, in the order
        :func:`~tooling.records.layout.repository_files` lists them."""
        if not stem or stem.startswith("."):
            return []
        wanted = sorted(stem + suffix for suffix in SUFFIXES)
        found = [os.path.join(f.path, name) for f in self.listing() for name in wanted if f.holds(name)]
        return found + [path for path in self.shipped if os.path.basename(path) in wanted]

    def within(self, directory: str) -> list[str]:
        """The record files under the folder ``directory`` (relative to the root: a kind's folder)
        and the shipped ones of that folder, in the order repository_files lists them."""
        own = os.path.join(str(self.root), directory)
        shipped = os.path.join(str(shipped_root()), directory)
        folders = self.listing()
        for index, f in enumerate(folders):
            if f.unlisted and (f.path == own or f.path.startswith(own + os.sep)):
                folders[index] = _listed_now(f)
        return [*(path for f in folders if f.path == own or f.path.startswith(own + os.sep)
                  for path in f.records),
                *(path for path in self.shipped if path.startswith(shipped + os.sep))]


def _listed_now(folder: Folder) -> Folder:
    """An unlisted folder listed now; one that went meanwhile holds nothing (as _visit finds it)."""
    try:
        return _listed(folder.path, os.stat(folder.path), time.time_ns(), None)
    except OSError:
        return Folder(folder.path, folder.stamp, False, {}, [])


def _links_counted(root: Path) -> int | None:
    """The device of ``root`` when its file system counts a folder's sub-folders in its link
    count (``root``'s is 2 plus its own), else None."""
    try:
        info = os.stat(root)
        with os.scandir(root) as entries:
            below = sum(1 for entry in entries if entry.is_dir(follow_symlinks=False))
    except OSError:
        return None
    return info.st_dev if info.st_nlink == 2 + below else None

