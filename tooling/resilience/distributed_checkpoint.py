"""Sharded checkpoints through torch.distributed.checkpoint (DCP), with CheckpointManager's promises.

DCP writes every rank's shards in parallel and reshards on load, but it does not fsync the
folders, checksum the shards, keep the last N or fall back when the newest step is torn. This
manager adds exactly that around DCP's own writer, reader and ``async_save``, with the helpers
the single-process :class:`~tooling.resilience.checkpoint.CheckpointManager` uses (fsync
overlapped with the CRC-32, manifest written last by atomic replace, rotation by rename, the
folder's writer lock). Every rank calls every method, in the same order: they are collectives.

Design: one folder per step, committed as a whole by a rename, then named by a manifest that
rank 0 writes last. The commit of step N::

    every rank                                          rank 0
    save(state, N): DCP plans the save (a collective)
    DCP writes its shards into .step-N.tmp/              (and DCP's own .metadata)
    fsync each of its files while computing its CRC-32, then fsync .step-N.tmp/
    gather: [(file, CRC-32, bytes)] or its error ------> every rank reported; none failed?
                                                           no:  remove .step-N.tmp/
                                                           yes: rename .step-N.tmp/ -> step-N/
                                                                fsync the folder
                                                                write manifest.dcp.json  <- COMMIT
                                                                rotate out steps beyond keep
    the outcome, broadcast by rank 0 <------------------
    save returns on every rank, or raises CheckpointSaveError on every rank

Why this cut: the gather is the barrier that makes "every rank's shards are durable" a fact
rank 0 knows before it commits; the rename makes the step's folder appear whole; the manifest,
written after both, is the one place that says which steps exist, with every file's size and
CRC-32. A kill at any moment, of one rank or of the whole job, leaves the old manifest or the new
one: never a named step that is half one save and half another. DCP's own fsync is off, ours
replaces it (:func:`~tooling.resilience.saving.sync_and_checksum`: the CRC-32 hides behind it).
Rank 0's room check and publish are in :mod:`~tooling.resilience.dcp_commit`.

Resume (:meth:`DistributedCheckpointManager.load_latest`): the newest step that every rank
verifies, all ranks falling back together, resharded on load; a rank's own ``rank_state`` comes
back to the rank of the same number (:mod:`~tooling.resilience.dcp_resume`).

Room (:mod:`~tooling.resilience.capacity`): once DCP has planned the save, and before any rank
writes, rank 0 (DCP's coordinator) asks the folder's file system for room for the step (the newest
step's bytes, or the plan's where larger) and its files' inodes; when it lacks either, DCP fails
the save on every rank, the empty temporary folder DCP made is removed, and every rank raises
StorageFull. No collective of its own: an async save checks in its background thread, and the
refusal surfaces at the next ``save``, ``wait`` or ``load_latest``.

Async (``async_save=True``): ``save`` blocks only for the copy of the state into staging buffers
(:func:`~tooling.resilience.saving.snapshot`, reused from save to save) and returns; DCP's
``async_save`` writes in a thread, and the same commit follows in that thread, on a gloo process
group of the manager's own so that it never interleaves with the training's collectives. So the
manifest names the step only once every rank's background write is durable. The next ``save``,
``wait`` or ``load_latest`` waits for it and re-raises its error.

One writer job per folder: rank 0 takes the folder's ``.lock`` at the first save or ``cleanup()``
(a second job gets ValueError on every rank); then every temporary folder is abandoned and
removed, and a lost manifest is rebuilt from the step folders whose DCP metadata is complete
(:mod:`~tooling.resilience.dcp_manifest`, which also lays out the folder).
"""
from __future__ import annotations

import threading
import warnings
import weakref
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import torch.distributed as dist
import torch.distributed.checkpoint as dcp

from tooling.resilience.capacity import Shortfall, StorageFull
from tooling.resilience.dcp_commit import publish, room_check
from tooling.resilience.dcp_manifest import (MANIFEST, StepEntry, check_folder, is_temporary, read_steps,
                                             rebuild_steps, shard_intact, temporary_folder, write_steps)
from tooling.resilience.dcp_resume import committed_steps, load_newest
from tooling.resilience.dcp_shards import (ModelAndOptimizer, Resumed, ShardWriter, Stager, durable, failure,
                                           with_rank_state)
from tooling.resilience.folder import hold_folder, unlink_all
from tooling.resilience.manifest import Entry, set_aside_manifest
from tooling.resilience.ranks import from_rank_zero, gather_at_rank_zero, rank_and_world
from tooling.resilience.saving import CheckpointSaveError

__all__ = ["CheckpointSaveError", "DistributedCheckpointManager", "ModelAndOptimizer", "Resumed", "StorageFull"]

# One process without a process group is a case this manager means, not a mistake to warn about.
warnings.filterwarnings("ignore", message="torch.distributed is disabled, unavailable or uninitialized")


class DistributedCheckpointManager:
    """Keep the last ``keep`` (at least 2) sharded checkpoints of a job in ``directory``, a folder
    every rank sees (a shared file system across nodes). Constructing one touches nothing; it
    raises ValueError for a folder that is not one of sharded checkpoints."""

    def __init__(self, directory: str | Path, *, keep: int = 3, async_save: bool = False) -> None:
        if keep < 2:
            raise ValueError(f"keep must be at least 2 (the newest may be mid-save), got {keep}")
        self.directory = Path(directory)
        check_folder(self.directory)
        self.keep, self.async_save = keep, async_save
        self._lock: weakref.finalize | None = None  # rank 0 of a writer job: the folder's lock
        self._ready = False  # cleanup() done, on every rank
        self._entries: list[StepEntry] = []  # rank 0: the manifest as it wrote it
        self._stager: Stager | None = None
        self._group: dist.ProcessGroup | None = None  # async saves' own, for their background collectives
        self._thread: threading.Thread | None = None  # an async save's write and commit
        self._rotation: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def entries(self) -> list[StepEntry]:
        """The committed steps (read by this process now), oldest first; when the manifest is
        missing or unreadable, the step folders whose DCP metadata is complete."""
        return committed_steps(self.directory)

    def verify(self, entry: StepEntry) -> bool:
        """Whether every file of ``entry`` has its recorded size and CRC-32 (this process alone)."""
        return all(shard_intact(self.directory / entry.folder, shard) for shard in entry.shards)

    def cleanup(self) -> list[str]:
        """Become the folder's writer (rank 0 takes the lock, or every rank raises ValueError),
        remove abandoned temporary folders and files, rebuild an unreadable manifest. Returns
        the names removed; nothing when already done."""
        self.wait()
        if self._ready:
            return []
        outcome: tuple[str | None, list[str]] = (None, [])
        if rank_and_world()[0] == 0:
            try:
                outcome = (None, self._take_folder())
            except (ValueError, OSError) as exc:
                outcome = (str(exc), [])
        error, removed = from_rank_zero(outcome)
        if error is not None:
            raise ValueError(error)
        if self.async_save and rank_and_world()[1] > 1:  # a collective too: every rank is here
            self._group = dist.new_group(backend="gloo")
        self._ready = True
        return removed

    def _take_folder(self) -> list[str]:
        self._lock = self._lock or hold_folder(self, self.directory)
        # with the lock ours, no other job writes here: every temporary name is abandoned
        removed = sorted(p.name for p in self.directory.iterdir() if is_temporary(p.name))
        unlink_all([self.directory / name for name in removed])
        entries = read_steps(self.directory)
        if entries is None:
            entries = rebuild_steps(self.directory)
            set_aside_manifest(self.directory, len(entries), MANIFEST)
            write_steps(self.directory, entries)
        self._entries = entries
        return removed

    def save(self, state: dict[str, Any], step: int, *, rank_state: Any = None) -> None:
        """Save ``state`` (tensors, DTensors, nested dicts, DCP ``Stateful`` objects such as
        :class:`ModelAndOptimizer`) as ``step``, with this rank's ``rank_state`` (any picklable
        object, pickled now). Raises StorageFull (a CheckpointSaveError) on every rank, before a
        byte is written, when the folder's file system lacks the space or inodes for the step
        (async: at the next save, wait or load_latest);
        CheckpointSaveError on every rank when the step could not be committed, ValueError when
        another job holds the folder. Async: see the module."""
        if not isinstance(step, int) or isinstance(step, bool) or step < 0:
            raise ValueError(f"step must be a non-negative int, got {step!r}")
        self.cleanup()  # waits for the previous async save first
        rank = rank_and_world()[0]
        shards = with_rank_state(state, rank, rank_state)
        # no leftover to remove first: cleanup() removed the killed saves', a failed save its own
        room = room_check(self.directory, step, self._entries) if rank == 0 else None
        writer = ShardWriter(self.directory / temporary_folder(step), room)
        if not self.async_save:
            self._commit(writer, step, None, failure(lambda: dcp.save(shards, storage_writer=writer), rank))
            return
        self._stager = self._stager or Stager()
        written = dcp.async_save(shards, storage_writer=writer, process_group=self._group,
                                 async_stager=self._stager)
        assert isinstance(written, Future)  # our stager stages at once, so DCP hands back the upload
        self._thread = threading.Thread(target=self._commit_in_background, args=(written, writer, step),
                                        name="checkpoint-commit")  # not a daemon: an exit waits for it
        self._thread.start()

    def _commit_in_background(self, written: Future, writer: ShardWriter, step: int) -> None:
        try:
            self._commit(writer, step, self._group, failure(written.result, rank_and_world(self._group)[0]))
        except BaseException as exc:  # surfaced by the next wait()
            self._error = exc

    def _commit(self, writer: ShardWriter, step: int, group: dist.ProcessGroup | None,
                failed: str | None) -> None:
        rank = rank_and_world(group)[0]
        report = durable(writer, step, rank) if failed is None else failed
        reports = gather_at_rank_zero(report, group)  # the barrier: every rank's files are durable
        outcome = self._publish(step, reports, writer.refused) if reports is not None else None
        outcome = from_rank_zero(outcome, group)
        if isinstance(outcome, Shortfall):
            raise StorageFull(outcome)
        if outcome is not None:
            raise CheckpointSaveError(outcome)

    def _publish(self, step: int, reports: list[list[Entry] | str],
                 room: Shortfall | None) -> str | Shortfall | None:
        """Rank 0: commit the step if every rank's files are durable
        (:func:`~tooling.resilience.dcp_commit.publish`), keeping the manifest it wrote and its
        rotation; else say why not."""
        published = publish(self.directory, step, reports, room, self._entries, self.keep)
        if published.outcome is None:
            self._entries, self._rotation = published.kept, published.rotation
        return published.outcome

    def wait(self) -> None:
        """Block until an async save is committed (or not) and rotation done; re-raise its error."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._rotation is not None:
            self._rotation.join()
            self._rotation = None
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def load_latest(self, state: dict[str, Any], *, reshard: bool = False, at_most: int | None = None) -> Resumed | None:
        """Load the newest step whose every file verifies into ``state`` (in place, as
        ``dcp.load``), on every rank together; None when no step does. ``reshard=True`` loads a
        step saved by another number of ranks with per-rank state, without that state;
        ``at_most``: the newest at or before that step (the loss-spike guard's ``rollback_to``)."""
        self.wait()
        return load_newest(self.directory, state, reshard=reshard, at_most=at_most)

    def close(self) -> None:
        """Finish an async save, then give up the lock and the staging buffers."""
        try:
            self.wait()
        finally:
            if self._lock is not None:
                self._lock()
                self._lock = None
            self._stager = None

    def __enter__(self) -> DistributedCheckpointManager:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

