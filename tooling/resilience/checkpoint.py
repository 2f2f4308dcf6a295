"""Atomic checkpoints: a checkpoint exists only once the manifest, written last, names it.

Save: serialise to a temporary file in the same folder, fsync it while its CRC-32 is computed
from the page cache, rename it onto the final name, fsync the folder, then rewrite the manifest
the same way, and only then delete the checkpoints rotated out. A crash at any point leaves the
old manifest or the new one. Resume walks the manifest newest first and takes the first
checkpoint whose size and CRC-32 still match, so a corrupt newest file falls back to the
previous one. CRC-32 rather than a cryptographic hash: it is there to catch torn and truncated
writes, and it runs at memory speed. Before any of it, the folder's file system must have room
for one more checkpoint and its inodes (:mod:`~tooling.resilience.capacity`): else the save
raises StorageFull and writes nothing.

One writer and any number of readers per folder. The first save (or ``cleanup()``) takes the
folder's writer lock, ``.lock``: an flock, which the kernel drops when the process dies, so a
SIGKILL leaves no stale lock. A second writer gets a ValueError naming the folder and the
holder's PID. Only the writer deletes, and only what it can prove abandoned: temporary files
(no other process writes them while it holds the lock) and the checkpoints its own manifest
rotates out. A checkpoint file no manifest names is left alone. A missing or unreadable
manifest is rebuilt from the files that verify by their zip container's CRCs; the unreadable
one is moved aside, not deleted. Readers take no lock and delete nothing: ``load_latest``
re-reads the manifest each time and holds the file open while it verifies and loads it, so a
rotation in between is noticed and retried, never half-read. A process forked from a writer
(e.g. a DataLoader worker) shares its lock until it exits.
"""
from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import torch

from tooling.fs.atomic import fsync_path
from tooling.resilience.capacity import StorageFull, refused, shortfall
from tooling.resilience.folder import hold_folder, retire
from tooling.resilience.manifest import (Entry, checkpoint_files, checkpoint_name, is_temporary, manifest_state,
                                         matches, read_manifest, rebuild, set_aside_manifest, write_manifest,
                                         zip_intact)
from tooling.resilience.saving import (CheckpointSaveError, release_frames, save_error, snapshot, sync_and_checksum,
                                       tensor_bytes)

__all__ = ["CheckpointManager", "CheckpointSaveError", "Entry", "StorageFull", "snapshot"]

_RETRIES = 5  # manifest re-reads when the writer rotates a file away under a reader


class CheckpointManager:
    """Keep the last ``keep`` (at least 2) checkpoints of a run in ``directory``.

    Constructing one touches nothing on disk. Saving makes it the folder's only writer until
    ``close()`` (or exit); a manager that only calls ``load_latest`` is a reader.
    """

    def __init__(self, directory: str | Path, *, keep: int = 3, background: bool = False) -> None:
        if keep < 2:
            raise ValueError(f"keep must be at least 2 (the newest may be mid-save), got {keep}")
        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise ValueError(f"{self.directory}: not a folder")
        self.keep, self.background = keep, background
        self._lock: weakref.finalize | None = None  # closes the lock file descriptor, at close() or collection
        self._entries: list[Entry] = []  # the writer's manifest, once it holds the lock
        self._staged: Any = None  # the last background snapshot: its tensors are reused by the next
        self._thread: threading.Thread | None = None  # a background save
        self._rotation: threading.Thread | None = None  # deleting the checkpoints the last save rotated out
        self._error: BaseException | None = None

    @property
    def entries(self) -> list[Entry]:
        """The checkpoints the manifest names now, oldest first; when it is missing or
        unreadable, the checkpoint files that verify."""
        found = read_manifest(self.directory)
        return rebuild(self.directory) if found is None else found

    def cleanup(self) -> list[str]:
        """Become the folder's writer now rather than at the first save: take the lock (or raise
        ValueError), remove abandoned temporary files, rebuild an unreadable manifest.
        Returns the names removed; nothing when this manager already was the writer."""
        self.wait()
        if self._lock is not None:
            return []
        self._lock = hold_folder(self, self.directory)
        # with the lock ours, no other process writes here: every temporary file is abandoned
        removed = sorted(p.name for p in self.directory.iterdir() if is_temporary(p.name) and not p.is_dir())
        for name in removed:
            (self.directory / name).unlink(missing_ok=True)
        entries = read_manifest(self.directory)
        if entries is None:
            entries = rebuild(self.directory)
            set_aside_manifest(self.directory, len(entries))
            write_manifest(self.directory, entries)
        self._entries = entries
        return removed

    def save(self, state: dict[str, Any], step: int) -> None:
        """Persist ``state`` as ``step``. In background mode only the copy into staging
        buffers blocks; a failure surfaces at the next save, wait or load_latest.
        Raises StorageFull (a CheckpointSaveError) before writing anything when the folder's file
        system lacks the space or inodes for it, CheckpointSaveError when the write fails,
        ValueError when another writer holds the folder."""
        if not isinstance(step, int) or isinstance(step, bool) or step < 0:
            raise ValueError(f"step must be a non-negative int, got {step!r}")
        self.cleanup()  # waits for the previous background save; takes the lock the first time
        self._ensure_room(state, step)
        if not self.background:
            self._persist(state, step)
            return
        self._staged = snapshot(state, self._staged)
        # not a daemon: an interpreter exiting right after save() still finishes writing
        self._thread = threading.Thread(target=self._persist_in_background, args=(self._staged, step),
                                        name="checkpoint-save")
        self._thread.start()

    def _ensure_room(self, state: dict[str, Any], step: int) -> None:
        """Raise StorageFull, before a byte is written, when the folder's file system lacks room
        for one more checkpoint (:mod:`~tooling.resilience.capacity`)."""
        last, tensors = (self._entries[-1].bytes if self._entries else 0), tensor_bytes(state)
        estimate, basis = (last, "the last checkpoint's size") if last >= tensors else (tensors, "the state's tensors")
        found = shortfall(self.directory, step, estimate=estimate, basis=basis, files=2,
                          what="its file and the manifest's new copy")
        if found is not None:
            raise refused(found)

    def _persist_in_background(self, state: dict[str, Any], step: int) -> None:
        try:
            self._persist(state, step)
        except BaseException as exc:  # surfaced by the next wait()
            self._error = exc

    def wait(self) -> None:
        """Block until a background save is on disk and rotation done; re-raise a save's error."""
        if self._thread is not None:
            self._thread.join()  # first: it may start a rotation
            self._thread = None
        if self._rotation is not None:
            self._rotation.join()
            self._rotation = None
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def close(self) -> None:
        """Finish a background save, then give up the writer lock and the staging buffers."""
        try:
            self.wait()
        finally:
            if self._lock is not None:
                self._lock()
                self._lock = None
            self._staged = None

    def __enter__(self) -> CheckpointManager:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _persist(self, state: dict[str, Any], step: int) -> None:
        name = checkpoint_name(step)
        final, temp = self.directory / name, self.directory / f".{name}.tmp"
        try:
            torch.save(state, temp)  # torch's own file writer: much faster than a Python file object
            entry = Entry(step, name, *sync_and_checksum(temp))
            os.replace(temp, final)
        except BaseException as exc:
            release_frames(exc)
            temp.unlink(missing_ok=True)  # else it fills the disk that later, smaller saves need
            if isinstance(exc, (OSError, RuntimeError)):  # torch reports a full disk as a RuntimeError
                raise save_error(self.directory, step, state, exc) from exc
            raise
        entries = sorted([e for e in self._entries if e.step != step] + [entry], key=lambda e: e.step)
        kept, dropped = entries[-self.keep:], entries[:-self.keep]
        try:
            fsync_path(self.directory)
            write_manifest(self.directory, kept)  # written last: now the checkpoint exists
        except OSError as exc:
            if all(e.step != step for e in self._entries):  # ours alone, named by no manifest
                final.unlink(missing_ok=True)
            raise save_error(self.directory, step, state, exc) from exc
        self._entries = kept
        # only now that the manifest no longer names them
        self._rotation = retire(self.directory, [(old.file, f".{old.file}.retired.tmp") for old in dropped])

    def verify(self, entry: Entry) -> bool:
        """Whether ``entry``'s file still has the recorded size and CRC-32."""
        try:
            with open(self.directory / entry.file, "rb") as handle:
                return matches(handle, entry)
        except (FileNotFoundError, IsADirectoryError):
            return False

    def load_latest(self, *, map_location: str | None = "cpu",
                    at_most: int | None = None) -> tuple[dict[str, Any], int] | None:
        """The newest checkpoint that verifies, with its step; None when there is none. With
        ``at_most``, the newest of those at or before that step (a rollback to before a loss spike)."""
        self.wait()
        attempt = 0
        while True:
            before = manifest_state(self.directory)
            entries = read_manifest(self.directory)
            candidates: list[tuple[int, str, Callable[[IO[bytes]], bool]]] = (
                [(e.step, e.file, lambda handle, e=e: matches(handle, e)) for e in reversed(entries)]
                if entries is not None else [(step, name, zip_intact) for step, name in checkpoint_files(self.directory)])
            for step, name, intact in candidates:
                if at_most is not None and step > at_most:
                    continue
                found, state = self._load_if_intact(name, intact, map_location)
                if found:
                    return state, step
                if attempt < _RETRIES and manifest_state(self.directory) != before:
                    break  # the writer moved on meanwhile: its new manifest names newer files
            else:
                return None
            attempt += 1

    def _load_if_intact(self, name: str, intact: Callable[[IO[bytes]], bool],
                        map_location: str | None) -> tuple[bool, Any]:
        try:
            # one open file for the check and the load: a rotation after the check cannot swap it
            with open(self.directory / name, "rb") as handle:
                if not intact(handle):
                    return False, None
                handle.seek(0)
                # our own file, checksum verified: it also holds RNG states and config, not only weights
                return True, torch.load(handle, map_location=map_location, weights_only=False)
        except (FileNotFoundError, IsADirectoryError):  # rotated away since the manifest was read
            return False, None
