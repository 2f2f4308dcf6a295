"""A repository's record names kept up to date from the kernel's word of what changed.

:class:`~tooling.records.lookup.RecordNames` lists a folder again whenever its time moved: a
write of another process (``tooling set`` resolving an incident, a person's editor, a second
watch) makes the next refresh list the whole folder, a few ms per 10,000 names. A
:class:`FollowedNames` watches each folder it lists (:mod:`tooling.records.notify`, added
before the listing: a change after it is told) and takes into its listing only the names told
of, one ``lstat`` each, whatever the folder holds. Where the kernel's word is not complete (no
inotify, a network file system, events lost, the watch ended, a sub-folder came or went, or the
folder's time moved with nothing told) the folder is listed again, as RecordNames does.

A name told of is in the new listing's ``changed`` even when its inode stayed (a save in place),
so that a reader looks at its file again (:mod:`tooling.watch.known`): a followed folder needs
no sweep of its files for saves in place. A listing made where not all was told (events lost, a
folder followed only from now) has every name in ``changed``: each file is looked at once.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from tooling.records.listing import Folder, list_folder
from tooling.records.lookup import RecordNames
from tooling.records.notify import Changes, Notifier


class FollowedNames(RecordNames):
    """RecordNames whose folders, once listed, are followed by their notifications."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._notifier = Notifier.open()
        self._followed: set[str] = set()  # folders whose listing is kept up to date by their events
        self._told = Changes()

    def followed(self, path: str) -> bool:
        """Whether the folder at ``path`` is followed: every change in it is told."""
        return path in self._followed

    def refresh(self) -> list[Folder]:
        if self._notifier is not None:
            self._told = self._notifier.changes()  # before the stats: a change after it is told next time
        folders = super().refresh()
        for path in self._followed - {folder.path for folder in folders}:  # gone: its watch too
            self._followed.discard(path)
            if self._notifier is not None:
                self._notifier.unwatch(path)
        return folders

    def _current(self, path: str, info: os.stat_result, listed_at: int, folder: Folder | None) -> Folder:
        if self._notifier is None:
            return super()._current(path, info, listed_at, folder)
        stamp, told = (info.st_ino, info.st_mtime_ns), self._told
        complete = path in self._followed and not told.overflow and path not in told.ended  # all of it told
        if folder is not None and complete and path not in told.listing:
            names = told.names.get(path)
            if not names and stamp == folder.stamp:
                return folder
            # time moved with nothing told, or another folder in its place (a new inode): listed
            applied = _applied(folder, names, stamp) if names and stamp[0] == folder.stamp[0] else None
            if applied is not None:
                return applied
        elif folder is not None and path not in self._followed and folder.current(stamp):
            return folder  # not followed (its file system does not tell): listed again when its time moves
        self._followed.discard(path)
        followed = self._notifier.watch(path)  # before the listing: what changes after it is told
        if followed:
            self._followed.add(path)
        listed = list_folder(path, info, listed_at, folder)
        if followed and folder is not None:
            # a save in place leaves a listing as it was: the names told of are looked at again, or
            # every name (one stat each, once) where what changed was not all told (events lost,
            # not followed until now)
            seen = told.names.get(path, set()) if complete else listed.inodes.keys()
            listed.changed = listed.changed | frozenset(name for name in seen if name in listed.inodes)
        return listed

    def close(self) -> None:
        if self._notifier is not None:
            self._notifier.close()
            self._notifier = None
        self._followed.clear()


def _applied(folder: Folder, names: set[str], stamp: tuple[int, int]) -> Folder | None:
    """``folder``'s listing with the entries ``names`` as they are now (one lstat each); None
    when one is a folder (where it goes among those walked is for a listing to say) or cannot
    be looked at."""
    found: dict[str, int] = {}
    gone: list[str] = []
    for name in names:
        try:
            info = os.lstat(os.path.join(folder.path, name))
        except FileNotFoundError:
            if name in folder.below:  # a sub-folder that went
                return None
            if name in folder.inodes:
                gone.append(name)
            continue
        except OSError:
            return None
        if stat.S_ISDIR(info.st_mode) or name in folder.below:  # one that came, or a file in its place
            return None
        found[name] = info.st_ino
    # told of names that came and went between two looks: the listing as it was, of the new stamp
    return folder.patched(stamp, found, gone)
