"""Pruning a checkpoint folder beyond its newest N, from outside the training: a retention job.

A running manager keeps its own ``keep`` already (it rotates the oldest out after each save).
This is for the folder no one writes now: a Prolog before the next job, a cron job, the node
health check's ``--prune-keep``, when the file system fills and the run's own ``keep`` was
generous. It takes the folder's writer lock as a manager would (a folder a job writes now is
refused, ValueError naming the holder's PID), so it never races a save, and it works on both
kinds of folder: a :class:`~tooling.resilience.checkpoint.CheckpointManager`'s (manifest.json,
ckpt-NNNNNNNN.pt) and a sharded one's (manifest.dcp.json, step-NNNNNNNN/).

What it keeps: the newest ``keep`` (at least 2) checkpoints the manifest names, and, whatever
their age, the newest two that still verify (size and CRC-32): when the newest ones turn out
torn, the older good ones are what a resume falls back to, so they are never pruned. Verifying
reads those checkpoints whole; it happens only when there is something to prune. The manifest
is rewritten first (atomically), then the pruned files are renamed aside and deleted, as a
manager rotates: a kill in between leaves temporary names the next writer removes. Torch is not
imported.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from tooling.resilience import dcp_manifest, manifest
from tooling.resilience.folder import hold_folder, retire

VERIFIED = 2  # the newest checkpoints that verify are never pruned
T = TypeVar("T", manifest.Entry, dcp_manifest.StepEntry)


@dataclass(frozen=True)
class Pruned:
    directory: Path
    removed: tuple[int, ...]  # the steps pruned, oldest first
    kept: tuple[int, ...]
    freed: int  # bytes, as the manifest recorded them


def is_checkpoint_folder(directory: Path) -> bool:
    """Whether ``directory`` holds a manager's manifest, of either kind."""
    return any(os.path.lexists(directory / name) for name in (manifest.MANIFEST, dcp_manifest.MANIFEST))


class _Pruner:
    """The owner of the folder's lock while it prunes (the lock names its type)."""


def prune(directory: str | Path, *, keep: int) -> Pruned:
    """Prune the checkpoints of ``directory`` beyond the newest ``keep`` and the newest two that
    verify. Raises ValueError when keep is under 2, the folder holds no readable manifest of
    either kind, or a writer holds it."""
    if keep < 2:
        raise ValueError(f"keep must be at least 2 (the newest may be torn), got {keep}")
    directory = Path(directory)
    sharded = os.path.lexists(directory / dcp_manifest.MANIFEST)
    if not is_checkpoint_folder(directory):
        raise ValueError(f"{directory}: no {manifest.MANIFEST} or {dcp_manifest.MANIFEST}; expected the folder "
                         "of a CheckpointManager or a DistributedCheckpointManager")
    owner = _Pruner()
    try:
        release = hold_folder(owner, directory)
    except ValueError as exc:  # its words are for a second manager: say what it means here
        raise ValueError(f"{str(exc).split('; one ')[0]}: a job saves there now, and its manager prunes beyond its "
                         "own keep; nothing pruned") from None
    try:
        return _prune_sharded(directory, keep) if sharded else _prune_single(directory, keep)
    finally:
        release()


def _prune_single(directory: Path, keep: int) -> Pruned:
    entries = manifest.read_manifest(directory)
    if entries is None:
        raise ValueError(f"{directory / manifest.MANIFEST}: unreadable; nothing pruned (the manager rebuilds it "
                         "from the checkpoints that verify at its next start)")

    def verifies(entry: manifest.Entry) -> bool:
        try:
            with open(directory / entry.file, "rb") as handle:
                return manifest.matches(handle, entry)
        except OSError:
            return False

    kept = _kept(entries, verifies, keep)
    dropped = [e for e in entries if e not in kept]
    if dropped:
        manifest.write_manifest(directory, kept)  # first: then no manifest names them
        _wait(retire(directory, [(e.file, f".{e.file}.retired.tmp") for e in dropped]))
    return Pruned(directory, tuple(e.step for e in dropped), tuple(e.step for e in kept),
                  sum(e.bytes for e in dropped))


def _prune_sharded(directory: Path, keep: int) -> Pruned:
    entries = dcp_manifest.read_steps(directory)
    if entries is None:
        raise ValueError(f"{directory / dcp_manifest.MANIFEST}: unreadable; nothing pruned (the manager rebuilds "
                         "it from the complete steps at its next start)")

    def verifies(entry: dcp_manifest.StepEntry) -> bool:
        return all(dcp_manifest.shard_intact(directory / entry.folder, shard) for shard in entry.shards)

    kept = _kept(entries, verifies, keep)
    dropped = [e for e in entries if e not in kept]
    if dropped:
        dcp_manifest.write_steps(directory, kept)  # first: then no manifest names them
        _wait(retire(directory, [(e.folder, dcp_manifest.retired_folder(e.step)) for e in dropped]))
    return Pruned(directory, tuple(e.step for e in dropped), tuple(e.step for e in kept),
                  sum(s.bytes for e in dropped for s in e.shards))


def _kept(entries: list[T], verifies: Callable[[T], bool], keep: int) -> list[T]:
    """The entries to keep, oldest first: the newest ``keep``, and the newest two that verify
    (searched newest first, and only when something would go)."""
    if len(entries) <= keep:
        return entries
    kept, found = entries[-keep:], 0
    for entry in reversed(entries):
        if found == VERIFIED:
            break
        if verifies(entry):
            kept = kept if entry in kept else [entry, *kept]
            found += 1
    return sorted(kept, key=lambda e: e.step)


def _wait(thread: threading.Thread | None) -> None:
    if thread is not None:
        thread.join()
