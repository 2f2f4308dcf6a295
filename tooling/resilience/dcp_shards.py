"""One rank's part of a sharded checkpoint, through torch.distributed.checkpoint (DCP): the writer
that remembers which files it wrote, the staging copy of an async save, the model-and-optimizer
adapter, the report each rank sends rank 0 once its files are durable, and the load of one
verified step by every rank together, with the state of each rank alone.

The commit protocol that puts these together is in
:mod:`~tooling.resilience.distributed_checkpoint`.
"""
from __future__ import annotations

import io
import math
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.api import CheckpointException
from torch.distributed.checkpoint.planner import SavePlan
from torch.distributed.checkpoint.staging import AsyncStager
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.checkpoint.stateful import Stateful

from tooling.fs.atomic import fsync_path
from tooling.resilience.capacity import Shortfall, refused
from tooling.resilience.dcp_manifest import METADATA, StepEntry
from tooling.resilience.manifest import Entry
from tooling.resilience.ranks import any_rank, from_rank_zero
from tooling.resilience.saving import snapshot, sync_and_checksum

RANK_STATE = "rank_state-"  # + the rank: the key of one rank's own state in the saved state dict
# a write or load that failed on some rank; DCP gathers every rank's failure into one
# CheckpointException (a BaseException), raised on all ranks
FAILURES = (OSError, RuntimeError, ValueError, KeyError, CheckpointException)


@dataclass(frozen=True)
class Resumed:
    step: int
    rank_state: Any  # what this rank passed as rank_state, or None (none saved, or reshard=True)
    saved_by: int  # the number of ranks that saved the step


# rank 0's room check for the step, from DCP's global plan: (planned bytes, ranks) -> what the file system lacks
RoomCheck = Callable[[int, int], Shortfall | None]


class ShardWriter(dcp.FileSystemWriter):
    """DCP's writer, remembering the files this rank wrote: the ones it must fsync and checksum.

    On rank 0 (DCP's coordinator) it also checks room for the step once every rank has planned
    and before any rank writes (``room``, :mod:`~tooling.resilience.capacity`): DCP's global plan
    holds every rank's writes, replicated ones counted once, Stateful objects included, and the
    check needs no collective of its own (an async save's stays in its background thread). A
    refusal is kept in ``refused`` and raised, and DCP fails the save on every rank."""

    def __init__(self, path: Path, room: RoomCheck | None = None) -> None:
        super().__init__(path, sync_files=False)  # our fsync, overlapped with the CRC-32, replaces DCP's
        self.files: list[str] = []
        self.room = room
        self.refused: Shortfall | None = None

    def prepare_global_plan(self, plans: list[SavePlan]) -> list[SavePlan]:
        if self.room is not None and (found := self.room(planned_bytes(plans), len(plans))) is not None:
            self.refused = found
            raise refused(found)
        return super().prepare_global_plan(plans)

    def write_data(self, plan: Any, planner: Any) -> Any:
        written = super().write_data(plan, planner)
        self.files = sorted({result.storage_data.relative_path for result in written.wait()})
        return written


class Stager(AsyncStager):
    """The copy an async save writes from, into the previous save's buffers (no fresh pages)."""

    _synchronize_after_execute = False  # the copy is complete when stage() returns

    def __init__(self) -> None:
        self.staged: Any = None

    def stage(self, state_dict: dict[str, Any]) -> dict[str, Any]:
        self.staged = snapshot(state_dict, self.staged)
        return self.staged


class ModelAndOptimizer(Stateful):
    """A model and its optimizer as DCP saves them: through ``get_state_dict``/``set_state_dict``,
    so that FSDP2 (DTensor) parameters and optimizer state stay sharded, each rank writing its
    own shards, and load into any other sharding or into one process."""

    def __init__(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> None:
        self.model, self.optimizer = model, optimizer

    def state_dict(self) -> dict[str, Any]:
        model, optimizer = get_state_dict(self.model, self.optimizer)
        return {"model": model, "optimizer": optimizer}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        set_state_dict(self.model, self.optimizer, model_state_dict=state_dict["model"],
                       optim_state_dict=state_dict["optimizer"])


def planned_bytes(plans: list[SavePlan]) -> int:
    """The tensor bytes DCP's plans will write, each chunk once (a pickled object's size is not
    in the plan: DCP's own planner leaves it out until it serialises it)."""
    total = 0
    for item in (item for plan in plans for item in plan.items):
        if item.tensor_data is not None:
            numel = math.prod(item.tensor_data.chunk.sizes)
            total += numel * torch._utils._element_size(item.tensor_data.properties.dtype)
    return total


def with_rank_state(state: dict[str, Any], rank: int, rank_state: Any) -> dict[str, Any]:
    """The dict DCP saves: ``state`` and, under this rank's own key, ``rank_state`` pickled now
    (later changes to the RNG or the data position do not leak into the save)."""
    clashing = sorted(key for key in state if isinstance(key, str) and key.startswith(RANK_STATE))
    if clashing:
        raise ValueError(f"state keys {clashing} start with {RANK_STATE!r}, which is reserved for rank_state")
    shards = dict(state)
    if rank_state is not None:
        pickled = io.BytesIO()
        torch.save(rank_state, pickled)
        shards[f"{RANK_STATE}{rank}"] = pickled.getvalue()
    return shards


def failure(action: Any, rank: int) -> str | None:
    """Run ``action``; None if it worked, else one line saying on which rank and why."""
    try:
        action()
    except FAILURES as exc:
        failures = exc.failures.items() if isinstance(exc, CheckpointException) else [(rank, (exc, None))]
        return "; ".join(f"rank {where}: {type(error).__name__}: {error}" for where, (error, _) in sorted(failures))
    return None


def durable(writer: ShardWriter, step: int, rank: int) -> list[Entry] | str:
    """fsync this rank's files (with their CRC-32, :func:`sync_and_checksum`) and then the folder:
    this rank's report for rank 0, its files with size and CRC-32, or what went wrong."""
    folder = Path(writer.path)
    try:
        shards = [Entry(step, name, *sync_and_checksum(folder / name))
                  for name in writer.files + ([METADATA] if rank == 0 else [])]  # rank 0: DCP's coordinator
        fsync_path(folder)
        return shards
    except OSError as exc:
        return f"rank {rank}: {type(exc).__name__}: {exc}"


def saved_ranks(folder: Path) -> set[int] | None:
    """The ranks whose own state (``rank_state``) the step in ``folder`` holds; None when its
    metadata cannot be read (a writer job rotated the step away meanwhile)."""
    try:
        keys = dcp.FileSystemReader(folder).read_metadata().state_dict_metadata
    except (OSError, ValueError, EOFError, pickle.UnpicklingError):
        return None
    return {int(key[len(RANK_STATE):]) for key in keys if key.startswith(RANK_STATE)}


def load_agreed(folder: Path, entry: StepEntry, state: dict[str, Any], rank: int, world: int, *,
                reshard: bool) -> Resumed | str:
    """Load one verified step into ``state`` on every rank together; or what failed, on every rank.
    Raises ValueError on every rank when the step holds per-rank state that cannot reshard."""
    ranks = from_rank_zero(saved_ranks(folder) if rank == 0 else None)
    if ranks is None:
        return "its .metadata is unreadable"
    if ranks and entry.world_size != world and not reshard:
        raise ValueError(
            f"{folder}: step {entry.step} was saved by {entry.world_size} ranks, each with its own "
            f"rank_state (RNG states, data position), and this job has {world}; per-rank state does "
            f"not reshard: resume with {entry.world_size} ranks, or pass reshard=True to load the "
            f"sharded state alone (rank_state None on every rank)")
    own = entry.world_size == world and rank in ranks
    loaded: list[Any] = []
    failed = failure(lambda: loaded.append(load_step(folder, state, rank, own_state=own)), rank)
    if any_rank(failed is not None):  # DCP fails on every rank, a model's load_state_dict maybe not
        return failed or "it failed on another rank"
    return Resumed(entry.step, loaded[0], entry.world_size)


def load_step(folder: Path, state: dict[str, Any], rank: int, *, own_state: bool) -> Any:
    """DCP's load of ``folder`` into ``state`` (in place, resharded to this job); returns this
    rank's saved ``rank_state`` when ``own_state``, else None."""
    target, key = dict(state), f"{RANK_STATE}{rank}"
    if own_state:
        target[key] = b""  # a placeholder: DCP puts the saved bytes in its place
    dcp.load(target, storage_reader=dcp.FileSystemReader(folder))
    for name in state:  # dcp.load replaces the plain values of the dict it is given: copy them back
        if not isinstance(state[name], Stateful):
            state[name] = target[name]
    # our own file, its CRC-32 verified: RNG states and positions, not only tensors
    return torch.load(io.BytesIO(target[key]), weights_only=False) if own_state else None
