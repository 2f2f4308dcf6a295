"""Writes that never leave a half-written file: temp file, fsync, rename (or link).

An error of the operating system (a full disk, a read-only folder) is raised as an
``OSError`` naming the file being written, not the temporary file nobody asked about, and
the temporary file is removed: a failed write leaves the folder exactly as it was.
"""
from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from tooling.fs.writers import writer_alive


def _named(exc: OSError, path: Path) -> OSError:
    return type(exc)(exc.errno, exc.strerror, str(path)) if exc.errno else exc


def _write_temp(path: Path, text: str | bytes) -> str:
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _named(exc, path) from exc
    try:
        with os.fdopen(fd, "wb") as handle:  # bytes as they are (a cache's pickle), text as UTF-8
            handle.write(text if isinstance(text, bytes) else text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException as exc:
        os.unlink(temp)
        if isinstance(exc, OSError):
            raise _named(exc, path) from exc
        raise
    return temp


# a file this process replaced -> its folder's stamp (inode, modification time) just after: the
# folder's listing, one system call of a few ms at 10,000 names, is skipped at the file's next
# replace when nothing moved that time since (a writer that died since made its temporary file:
# it moved it). Best effort, as the sweep is: a leftover made within the tick of that stat is
# swept at a later edit, after anything else moved the folder's time.
_swept: dict[str, tuple[int, int]] = {}


def _folder_stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path.parent)
    except OSError:
        return None
    return info.st_ino, info.st_mtime_ns


def _sweep_leftovers(path: Path, before: tuple[int, int] | None) -> None:
    """Remove the temporary files of ``path`` that SIGKILLed writers left (their pid, in the
    name, is gone): each edit of a record cleans up after the writers that died writing it.
    ``before``: the folder's stamp before this write made its own temporary file."""
    if before is not None and _swept.get(str(path)) == before:
        return
    prefix = f".{path.name}."
    try:
        names = os.listdir(path.parent)
    except OSError:  # an unreadable folder: no leftover to find (the write says what is wrong)
        return
    # the names matched in C (filter, a compiled pattern), not one by one in Python as a glob does
    for name in filter(re.compile(re.escape(prefix) + r".*\.tmp\Z", re.DOTALL).match, names):
        leftover = path.parent / name
        pid = name[len(prefix):].split(".", 1)[0]
        try:
            if pid.isdigit() and not writer_alive(int(pid), leftover.stat().st_mtime):
                leftover.unlink()
        except OSError:  # gone already (another writer swept it), or not ours to remove
            pass


def fsync_path(path: Path) -> None:
    """fsync a file or a directory by name (a directory's fsync makes a rename in it durable)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _replaced(path: Path) -> Path:
    """The regular file a replacement of ``path`` renames over: a link's target (created when
    the link leads to nothing). A loop of links, a folder, a device or a FIFO is refused: a
    rename would put a file in place of the link, or of /dev/null."""
    if path.is_symlink():
        try:
            path = Path(os.path.realpath(path, strict=True))
        except FileNotFoundError:
            path = Path(os.path.realpath(path))
        except OSError as exc:  # ELOOP
            raise _named(exc, path) from exc
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return path
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a device, a pipe or a socket"
        raise OSError(errno.EINVAL, f"{kind}, not a regular file; expected a file to replace", str(path))
    return path


def replace_file(path: Path, text: str | bytes, *, still: Callable[[], bool] | None = None) -> bool:
    """Atomically replace (or create) ``path`` with ``text`` (UTF-8), or bytes as they are; True once replaced.

    ``still``: asked once the new text is on disk, just before the rename; False leaves ``path``
    as it is and returns False. A compare-and-swap asks here, not before the write, so that a
    writer outside the lock (a person's editor) saving meanwhile is lost only in the instant
    of the rename, not during the fsync. A symbolic link is edited through: its target is
    replaced and the link stays a link.
    """
    path = _replaced(path)
    before = _folder_stamp(path)
    temp = _write_temp(path, text)
    # only here, not in create_file: listing the folder is one scan per edit, but would be one per
    # record for an import of 100,000 rows
    _sweep_leftovers(path, before)
    try:
        if still is not None and not still():
            os.unlink(temp)
            return False
        # the mode of the file replaced; a new file is made as create_file makes one, not 0600
        os.chmod(temp, path.stat().st_mode & 0o7777 if path.exists() else 0o644)
        os.replace(temp, path)
    except BaseException as exc:
        if os.path.exists(temp):
            os.unlink(temp)
        if isinstance(exc, OSError):
            raise _named(exc, path) from exc
        raise
    fsync_path(path.parent)
    if (after := _folder_stamp(path)) is not None:
        _swept[str(path)] = after
    return True


def create_file(path: Path, text: str) -> None:
    """Create ``path`` with ``text`` complete, or raise FileExistsError; never overwrites.

    link(2) fails if the name exists, so two writers racing for one name cannot both win,
    and a reader never sees the file before its content is on disk.
    """
    temp = _write_temp(path, text)
    try:
        os.chmod(temp, 0o644)
        os.link(temp, path)
    except FileExistsError:
        raise
    except OSError as exc:
        raise _named(exc, path) from exc
    finally:
        os.unlink(temp)
    fsync_path(path.parent)
