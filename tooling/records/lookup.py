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
time; a folder changed within :data:`~tooling.records.listing.RACY` seconds of being listed is
listed again at the next refresh too, as git does with files: on a file system whose times are
coarse (a second, two on FAT), a second change within the same tick leaves the same time. A
folder as listed, and its listing updated without listing it again, is
:class:`~tooling.records.listing.Folder`.

The reader's own writes move its folders' times too, and listing a folder of 10,000 names takes
a few ms (the system call alone): :meth:`RecordNames.wrote` takes the names it wrote into the
listing it has and the time they left, so that the next refresh need not list the folder again.
What the time alone cannot tell apart from its own writes (another process writing into the
folder between the refresh before them and the stat after them, or within the tick of that
stat) is found by listing it again at least every :data:`~tooling.records.listing.VOUCHED`
seconds while it writes.
"""
from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

from tooling.records.kinds import RECORD_DIRS
from tooling.records.layout import SUFFIXES, shipped_records
from tooling.records.listing import Folder, list_folder, list_unlisted
from tooling.records.shipped import shipped_root


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
            else list_folder(path, info, listed_at, folder)

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
            stamp = (info.st_ino, info.st_mtime_ns)
            self._folders[index] = folder.patched(stamp, inodes, own=True)  # type: ignore[index]

    def followed(self, path: str) -> bool:
        """Whether every change in the folder at ``path`` is told (a save in place too): never
        here, where a change is found by the folder's stat
        (:class:`~tooling.records.followed.FollowedNames` follows its folders)."""
        return False

    def close(self) -> None:
        """Stop following the folders: nothing to give back here."""

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
                folders[index] = list_unlisted(f)
        return [*(path for f in folders if f.path == own or f.path.startswith(own + os.sep)
                  for path in f.records),
                *(path for path in self.shipped if path.startswith(shipped + os.sep))]


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

