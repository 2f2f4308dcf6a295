"""A checkpoint folder's writer lock and the deletion of what its manifest rotated out, without
torch: the managers and the retention (:mod:`~tooling.resilience.retention`) share them, and a
health check that prunes a folder should not pay torch's import for it.
"""
from __future__ import annotations

import os
import shutil
import threading
import warnings
import weakref
from pathlib import Path

from tooling.fs.lock import holder, try_hold

LOCK = ".lock"


def hold_folder(owner: object, directory: Path) -> weakref.finalize:
    """Make ``owner`` the writer of ``directory`` (created if missing) by its ``.lock``, until the
    returned finalizer runs (called, or ``owner`` collected). Raises ValueError naming the
    holder's PID when another writer has it."""
    directory.mkdir(parents=True, exist_ok=True)
    lock = directory / LOCK
    if lock.is_symlink():  # try_hold would write our PID into whatever it points at
        raise ValueError(f"{lock} is a symbolic link; refusing to lock through it")
    fd = try_hold(lock)
    if fd is None:
        raise ValueError(f"{directory}: another writer (PID {holder(lock)}) holds {lock}; one "
                         f"{type(owner).__name__} saves per folder (to only read, call only load_latest)")
    return weakref.finalize(owner, os.close, fd)


def unlink_all(paths: list[Path]) -> None:
    """Delete rotated-out checkpoints, files or folders (run in a thread: a large file's unlink is slow)."""
    for path in paths:
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        except OSError as exc:  # harmless: the temporary name is the next writer's to remove
            warnings.warn(f"could not delete the rotated-out {path}: {exc}", stacklevel=1)


def retire(directory: Path, moves: list[tuple[str, str]]) -> threading.Thread | None:
    """Rotate checkpoints out of ``directory`` once no manifest names them: each (name, temporary
    name) renamed now, deleted in a thread that is returned (None when there was nothing).

    Unlinking a large file takes ext4 ~15 ms per 100 MB, so it leaves the loop's path: the
    rename is instant, and the temporary name is the next writer's to remove if this process
    dies first."""
    retired = []
    for name, aside in moves:
        try:
            os.replace(directory / name, directory / aside)
        except FileNotFoundError:  # named, but already gone
            continue
        except OSError as exc:  # e.g. a folder whose temporary name is still being deleted
            warnings.warn(f"could not rotate out {directory / name}: {exc}", stacklevel=2)
            continue
        retired.append(directory / aside)
    if not retired:
        return None
    thread = threading.Thread(target=unlink_all, args=(retired,), name="checkpoint-rotate")
    thread.start()
    return thread
