"""Resume from a folder of sharded checkpoints: the newest step that every rank verifies, loaded
by every rank together, for :meth:`DistributedCheckpointManager.load_latest
<tooling.resilience.distributed_checkpoint.DistributedCheckpointManager.load_latest>`.

Rank 0 reads the manifest and sends it to all; for each step, newest first, every rank verifies
its share of the files (size and CRC-32) and one vote (:func:`~tooling.resilience.ranks.any_rank`)
rejects the step on every rank if any file failed anywhere, so that all ranks fall back together;
then DCP loads it into any number of ranks (its planner reshards DTensors and FSDP2 state). A
rank's own ``rank_state`` (RNG states, its data position) is saved in its shard and given back to
the rank of the same number; it does not reshard, so a step saved by another number of ranks with
such state is refused (ValueError) unless ``reshard=True`` says the caller rebuilds it
(:func:`~tooling.resilience.dcp_shards.load_agreed`).

A reader needs no lock: when a writer job rotates the verified step away before it loads, the
manifest has changed, and the search starts again from the new one (a few times at most).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tooling.resilience.dcp_manifest import MANIFEST, StepEntry, read_steps, rebuild_steps, shard_intact
from tooling.resilience.dcp_shards import Resumed, load_agreed
from tooling.resilience.manifest import manifest_state
from tooling.resilience.ranks import any_rank, from_rank_zero, rank_and_world

_RETRIES = 5  # loads retried when a writer job rotated the verified step away meanwhile


def committed_steps(directory: Path) -> list[StepEntry]:
    """The committed steps (read by this process now), oldest first; when the manifest is
    missing or unreadable, the step folders whose DCP metadata is complete."""
    found = read_steps(directory)
    return rebuild_steps(directory) if found is None else found


def load_newest(directory: Path, state: dict[str, Any], *, reshard: bool, at_most: int | None = None) -> Resumed | None:
    """Load the newest step of ``directory`` (at or before ``at_most``, where given: a rollback to
    before a loss spike) whose every file verifies into ``state`` (in place, as ``dcp.load``), on
    every rank together; None when no step does. A collective."""
    rank, world = rank_and_world()
    for attempt in range(_RETRIES + 1):
        before, entries = from_rank_zero((manifest_state(directory, MANIFEST), committed_steps(directory))
                                         if rank == 0 else None)
        for entry in reversed([e for e in entries if at_most is None or e.step <= at_most]):
            folder = directory / entry.folder
            # each rank checks its share of the files; one vote: all ranks skip it, or none
            if any_rank(not all(shard_intact(folder, shard) for shard in entry.shards[rank::world])):
                continue
            resumed = load_agreed(folder, entry, state, rank, world, reshard=reshard)
            if isinstance(resumed, Resumed):
                return resumed
            moved = from_rank_zero(manifest_state(directory, MANIFEST) != before if rank == 0 else None)
            if moved and attempt < _RETRIES:
                break  # a writer job rotated it away meanwhile: read its new manifest
            raise ValueError(f"{folder}: step {entry.step} verifies but does not load into the state "
                             f"given ({resumed})")
        else:
            return None
    return None
