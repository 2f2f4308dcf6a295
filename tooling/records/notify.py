"""What changed in some folders since the last look, told by the kernel (Linux inotify).

A reader that lives on (``tooling watch``) must learn which names of a folder of 10,000 records
another process added, replaced, wrote into or removed. The folder's time says only that
something changed, and listing it again costs a few ms per 10,000 names; inotify names each entry
something happened to, whichever process did it, at the cost of the changes alone.

It is told only where it tells everything: on Linux, for folders of a local file system
(:data:`LOCAL`: a network file system such as NFS does not tell of other machines' changes), and
a folder's events are not trusted (:class:`Changes`) once the queue overflowed or its watch ended
(the folder removed or moved), nor enough where a sub-folder came or went. The caller then lists
it again, as it would without notifications. Events are read without blocking, when asked.
"""
from __future__ import annotations

import ctypes
import errno
import os
import re
import struct
import sys
import weakref
from dataclasses import dataclass, field

# what is asked of each folder: an entry created, removed, renamed in or out, written or closed
# after writing (a save in place), its attributes changed; the folder itself removed or moved
_MASK = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800 | 0x01000000  # ... | IN_ONLYDIR
_SELF_GONE = 0x400 | 0x800 | 0x2000 | 0x8000  # DELETE_SELF, MOVE_SELF, UNMOUNT, IGNORED (the watch ended)
_OVERFLOW, _ISDIR = 0x4000, 0x40000000
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len of the name that follows
_NONBLOCK_CLOEXEC = os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
LOCAL = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "jfs", "reiserfs", "zfs", "bcachefs",
                   "ramfs", "overlay"})


@dataclass
class Changes:
    """What the kernel told since the last :meth:`Notifier.changes`."""
    names: dict[str, set[str]] = field(default_factory=dict)  # folder -> names of entries something happened to
    listing: set[str] = field(default_factory=set)  # folders a sub-folder came to or went from: list them
    ended: set[str] = field(default_factory=set)  # folders whose watch ended: what changed since is not told
    overflow: bool = False  # events were lost: no folder's tell everything


class Notifier:
    """One inotify instance and the folders it watches (:meth:`open`: None where there is none)."""

    def __init__(self, fd: int, libc: ctypes.CDLL) -> None:
        self._fd, self._libc = fd, libc
        self._paths: dict[int, str] = {}  # watch descriptor -> folder
        self._wds: dict[str, int] = {}
        self._close = weakref.finalize(self, os.close, fd)

    @classmethod
    def open(cls) -> Notifier | None:
        if not sys.platform.startswith("linux"):
            return None
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(_NONBLOCK_CLOEXEC)
        except (OSError, AttributeError):
            return None
        return cls(fd, libc) if fd >= 0 else None

    def watch(self, path: str) -> bool:
        """Watch the folder at ``path`` (again); False where its events would not tell everything
        (not a local file system, no watch left: ENOSPC) or it is not there."""
        if path in self._wds:
            return True
        if not local(path):
            return False
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), _MASK)
        if wd < 0 or wd in self._paths:  # another path of a folder watched already: its events name that one
            return False
        self._paths[wd], self._wds[path] = path, wd
        return True

    def unwatch(self, path: str) -> None:
        wd = self._wds.pop(path, None)
        if wd is not None:
            del self._paths[wd]
            self._libc.inotify_rm_watch(self._fd, wd)  # (EINVAL where the kernel ended it already)

    def changes(self) -> Changes:
        """The events queued since the last call, by folder."""
        told = Changes()
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return told
            except OSError as error:  # EINTR aside, no read tells what was lost: as an overflow
                if error.errno != errno.EINTR:
                    told.overflow = True
                    return told
                continue
            self._take(data, told)

    def _take(self, data: bytes, told: Changes) -> None:
        offset = 0
        while offset < len(data):
            wd, mask, _, length = _HEADER.unpack_from(data, offset)
            name = os.fsdecode(data[offset + _HEADER.size:offset + _HEADER.size + length].rstrip(b"\0"))
            offset += _HEADER.size + length
            if mask & _OVERFLOW:
                told.overflow = True
                continue
            path = self._paths.get(wd)
            if path is None:  # a watch removed meanwhile
                continue
            if mask & _SELF_GONE:  # a folder moved away keeps its watch, under another path: ended
                told.ended.add(path)
                self.unwatch(path)
            elif mask & _ISDIR and name:  # a sub-folder: where it goes among those walked is the listing's to say
                told.listing.add(path)
            elif name:  # (none: the folder itself, its time set, say: its stamp tells)
                told.names.setdefault(path, set()).add(name)

    def close(self) -> None:
        self._close()


def local(path: str) -> bool:
    """Whether ``path`` is on a file system whose changes, by any process of any machine, this
    machine's kernel sees (``/proc/self/mountinfo``: the deepest mount holding it)."""
    real = os.path.realpath(path)
    best, kind = "", ""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as mounts:
            for line in mounts:
                fields, _, tail = line.partition(" - ")
                point = _unescaped(fields.split(" ")[4])
                inside = real == point or real.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(best):
                    best, kind = point, tail.split(" ", 1)[0]
    except (OSError, IndexError):
        return False
    return kind in LOCAL


def _unescaped(text: str) -> str:
    """A mount point as mountinfo writes it (a space as \\040) as a path."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)
