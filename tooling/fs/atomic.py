"""Writes that never leave a half-written record: temp file, fsync, rename (or link)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _write_temp(directory: Path, name: str, text: str) -> str:
    fd, temp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        os.unlink(temp)
        raise
    return temp


def fsync_path(path: Path) -> None:
    """fsync a file or a directory by name (a directory's fsync makes a rename in it durable)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_file(path: Path, text: str) -> None:
    """Atomically replace (or create) ``path`` with ``text``."""
    temp = _write_temp(path.parent, path.name, text)
    try:
        if path.exists():
            os.chmod(temp, path.stat().st_mode & 0o7777)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
    fsync_path(path.parent)


def create_file(path: Path, text: str) -> None:
    """Create ``path`` with ``text`` complete, or raise FileExistsError; never overwrites.

    link(2) fails if the name exists, so two writers racing for one name cannot both win,
    and a reader never sees the file before its content is on disk.
    """
    temp = _write_temp(path.parent, path.name, text)
    try:
        os.chmod(temp, 0o644)
        os.link(temp, path)
    finally:
        os.unlink(temp)
    fsync_path(path.parent)
