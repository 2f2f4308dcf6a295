"""Atomic checkpoints: a checkpoint exists only once the manifest, written last, names it.

Save: serialise to a temporary file in the same directory, checksum it, fsync it, rename it
onto the final name, fsync the directory, then rewrite the manifest the same way. A crash
at any point leaves either the old manifest (the new file is a leftover, removed on the next
start) or the new one. Resume walks the manifest newest first and takes the first checkpoint
whose size and CRC-32 still match, so a corrupt newest file falls back to the previous one.
CRC-32 rather than a cryptographic hash: it is there to catch torn and truncated writes, and it
runs at memory speed, so checksumming costs the save almost nothing.
"""
from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zlib

import torch

from tooling.records.atomic import fsync_path, replace_file

MANIFEST = "manifest.json"
_NAME = re.compile(r"^ckpt-(\d{8})\.pt$")


@dataclass(frozen=True)
class Entry:
    step: int
    file: str
    crc32: str
    bytes: int


def _crc32(path: Path) -> str:
    crc = 0
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            crc = zlib.crc32(block, crc)
    return f"{crc:08x}"


def _publish(temp: Path, final: Path) -> None:
    """fsync a finished temporary file, rename it onto its final name, fsync the directory."""
    fsync_path(temp)
    os.replace(temp, final)
    fsync_path(final.parent)


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
        temp = self.directory / f".{name}.tmp"
        torch.save(state, temp)  # torch's own file writer: much faster than a Python file object
        entry = Entry(step, name, _crc32(temp), temp.stat().st_size)  # read back from the page cache
        _publish(temp, self.directory / name)
        entries = sorted([e for e in self.entries if e.step != step] + [entry], key=lambda e: e.step)
        kept, dropped = entries[-self.keep:], entries[:-self.keep]
        # written last: now the checkpoint exists
        replace_file(self.directory / MANIFEST, json.dumps({"checkpoints": [e.__dict__ for e in kept]}, indent=1))
        self.entries = kept
        for entry in dropped:  # only after the manifest no longer names them
            (self.directory / entry.file).unlink(missing_ok=True)

    def verify(self, entry: Entry) -> bool:
        path = self.directory / entry.file
        try:
            return path.stat().st_size == entry.bytes and _crc32(path) == entry.crc32
        except FileNotFoundError:
            return False

    def load_latest(self, *, map_location: str | None = "cpu") -> tuple[dict[str, Any], int] | None:
        """The newest checkpoint that verifies, with its step; None when there is none."""
        self.wait()
        for entry in reversed(self.entries):
            if self.verify(entry):
                # our own file, checksum verified: it also holds RNG states and config, not only weights
                state = torch.load(self.directory / entry.file, map_location=map_location, weights_only=False)
                return state, entry.step
        return None
