"""Atomic checkpoints: a checkpoint exists only once the manifest, written last, names it.

Save: serialise to a temporary file in the same directory while hashing, flush, fsync, rename
onto the final name, fsync the directory, then rewrite the manifest the same way. A crash at
any point leaves either the old manifest (the new file is a leftover, removed on the next start)
or the new one. Resume walks the manifest newest first and takes the first checkpoint whose
size and sha256 still match, so a corrupt newest file falls back to the previous one.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

MANIFEST = "manifest.json"
_NAME = re.compile(r"^ckpt-(\d{8})\.pt$")


@dataclass(frozen=True)
class Entry:
    step: int
    file: str
    sha256: str
    bytes: int


class _HashingWriter:
    """A file that hashes what passes through it, so the data is read once."""

    def __init__(self, handle: Any) -> None:
        self.handle, self.hash, self.size = handle, hashlib.sha256(), 0

    def write(self, data: bytes) -> int:
        self.hash.update(data)
        self.size += len(data)
        return self.handle.write(data)

    def flush(self) -> None:
        self.handle.flush()


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomically(directory: Path, name: str, write: Any) -> Any:
    temp = directory / f".{name}.tmp"
    with open(temp, "wb") as handle:
        result = write(handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, directory / name)
    _fsync_dir(directory)
    return result


def snapshot(state: Any) -> Any:
    """A copy of ``state`` that later training steps cannot change (tensors cloned to CPU)."""
    if isinstance(state, torch.Tensor):
        return state.detach().to("cpu", copy=True)
    if isinstance(state, dict):
        return {k: snapshot(v) for k, v in state.items()}
    if isinstance(state, (list, tuple)):
        return type(state)(snapshot(v) for v in state)
    return state


class CheckpointManager:
    """Keep the last ``keep`` (at least 2) checkpoints of a run in ``directory``."""

    def __init__(self, directory: str | Path, *, keep: int = 3, background: bool = False) -> None:
        if keep < 2:
            raise ValueError(f"keep must be at least 2 (the newest may be mid-save), got {keep}")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.keep, self.background = keep, background
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self.entries = self._read_manifest()
        self._remove_leftovers()

    def _read_manifest(self) -> list[Entry]:
        try:
            data = json.loads((self.directory / MANIFEST).read_text())
        except FileNotFoundError:
            return []
        return [Entry(**e) for e in data["checkpoints"]]

    def _remove_leftovers(self) -> None:
        """Temporary files and checkpoints the manifest never named: interrupted saves."""
        named = {e.file for e in self.entries} | {MANIFEST}
        for path in self.directory.iterdir():
            if path.name not in named and (path.name.endswith(".tmp") or _NAME.match(path.name)):
                path.unlink(missing_ok=True)

    def save(self, state: dict[str, Any], step: int) -> None:
        """Persist ``state`` as ``step``; in background mode only the in-memory copy blocks."""
        self.wait()
        if not self.background:
            self._persist(state, step)
            return
        frozen = snapshot(state)
        self._thread = threading.Thread(target=self._persist_in_background, args=(frozen, step), daemon=True)
        self._thread.start()

    def _persist_in_background(self, state: dict[str, Any], step: int) -> None:
        try:
            self._persist(state, step)
        except BaseException as exc:  # surfaced by the next wait()
            self._error = exc

    def wait(self) -> None:
        """Block until a background save is on disk; re-raise its error, if any."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _persist(self, state: dict[str, Any], step: int) -> None:
        name = f"ckpt-{step:08d}.pt"
        writer = _write_atomically(self.directory, name, lambda h: self._serialise(state, h))
        entries = [e for e in self.entries if e.step != step]
        entries.append(Entry(step, name, writer.hash.hexdigest(), writer.size))
        entries.sort(key=lambda e: e.step)
        kept, dropped = entries[-self.keep:], entries[:-self.keep]
        manifest = json.dumps({"checkpoints": [e.__dict__ for e in kept]}, indent=1).encode()
        _write_atomically(self.directory, MANIFEST, lambda h: h.write(manifest))
        self.entries = kept
        for entry in dropped:  # only after the manifest no longer names them
            (self.directory / entry.file).unlink(missing_ok=True)

    @staticmethod
    def _serialise(state: dict[str, Any], handle: Any) -> _HashingWriter:
        writer = _HashingWriter(handle)
        torch.save(state, writer)
        return writer

    def verify(self, entry: Entry) -> bool:
        path = self.directory / entry.file
        try:
            if path.stat().st_size != entry.bytes:
                return False
            digest = hashlib.sha256()
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        except FileNotFoundError:
            return False
        return digest.hexdigest() == entry.sha256

    def load_latest(self, *, map_location: str | None = "cpu") -> tuple[dict[str, Any], int] | None:
        """The newest checkpoint that verifies, with its step; None when there is none."""
        self.wait()
        for entry in reversed(self.entries):
            if self.verify(entry):
                # our own file, checksum verified: it also holds RNG states and config, not only weights
                state = torch.load(self.directory / entry.file, map_location=map_location, weights_only=False)
                return state, entry.step
        return None
