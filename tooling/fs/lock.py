"""Advisory locks (flock) so that writers of one file, or of one folder, take turns.

Two shapes, both released by the kernel when the holder dies (a SIGKILL leaves no stale lock):

- :func:`locked` holds the lock of one file that is replaced by atomic renames. A rename gives
  the name a new inode, so after the lock is granted the name is checked to still refer to the
  inode that was locked; if another writer replaced it meanwhile, the lock is taken again.
- :func:`try_hold` takes a lock file (e.g. a folder's ``.lock``) for as long as the caller
  keeps the returned descriptor open: one writer per folder, readers need none.
"""
from __future__ import annotations

import errno
import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

POLL_SECONDS = 0.01


class LockTimeout(TimeoutError):
    """The lock stayed held by another process for longer than the caller would wait."""


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise


@contextmanager
def locked(path: Path, *, timeout: float = 30.0) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` names, as it is when the lock is granted."""
    deadline = time.monotonic() + timeout
    while True:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            while not _try_flock(fd):
                if time.monotonic() > deadline:
                    raise LockTimeout(f"{path}: still locked by another writer after {timeout:g} s")
                time.sleep(POLL_SECONDS)
            if _same_file(fd, path):
                yield
                return
        finally:
            os.close(fd)  # closing the descriptor releases the lock


def _same_file(fd: int, path: Path) -> bool:
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)


def try_hold(path: Path) -> int | None:
    """Lock the lock file ``path`` (created if missing) without waiting.

    Returns the open descriptor that holds the lock (close it to release), or None when
    another process holds it. The holder's PID is written into the file, for error messages.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    if not _try_flock(fd):
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def holder(path: Path) -> str:
    """The PID written by the lock's holder, or '?' when unknown."""
    try:
        return path.read_text(encoding="ascii").strip() or "?"
    except (OSError, UnicodeDecodeError):
        return "?"
