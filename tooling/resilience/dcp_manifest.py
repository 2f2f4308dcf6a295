"""The manifest of a sharded checkpoint folder: which steps are committed, and the size and
CRC-32 of every file of each (DCP's ``.metadata`` and one ``__R_N.distcp`` per rank).

The folder, as :class:`~tooling.resilience.distributed_checkpoint.DistributedCheckpointManager`
keeps it::

    manifest.dcp.json             written last, by rank 0: the committed steps, oldest first
    step-00000300/                a committed step: .metadata, __0_0.distcp, __1_0.distcp, ...
    step-00000400/
    .step-00000500.tmp/           a save in flight (or the remains of a killed one)
    .step-00000200.retired.tmp/   a step rotated out, being deleted
    .lock                         the writer lock, held by rank 0 of the job that saves

Only plain names are ever taken from the manifest: a step's folder must be ``step-NNNNNNNN`` of
its own step and its files DCP's own names, so a hand-edited or hostile entry is ignored, never
opened and never deleted. The entries reuse the single-file manifest's reader, writer and
checksum (:mod:`~tooling.resilience.manifest`): one shard is an ``Entry`` of its step. The file
has its own name, so that a ``CheckpointManager`` pointed at this folder by mistake never takes
this manifest for an unreadable one of its own.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooling.resilience.manifest import MANIFEST as SINGLE_PROCESS_MANIFEST
from tooling.resilience.manifest import (Entry, checkpoint_files, crc32_of, matches, parse_entry, read_listing,
                                         write_listing)

MANIFEST = "manifest.dcp.json"
METADATA = ".metadata"  # DCP's index of the step, written by rank 0 (the coordinator)
FOLDER = re.compile(r"^step-(\d{8,})\Z")
SHARD = re.compile(r"^(\.metadata|__(\d+)_\d+\.distcp)\Z")
# what only the rank 0 that holds the writer lock creates: abandoned when a new writer starts
_TEMPORARY = re.compile(r"^(\.step-\d{8,}(\.retired)?|\.manifest\.dcp\.json\.[A-Za-z0-9_]+)\.tmp\Z")


@dataclass(frozen=True)
class StepEntry:
    step: int
    folder: str
    world_size: int  # ranks that saved it: its sharded state loads into any number, per-rank state into as many
    shards: tuple[Entry, ...]  # every file of the step, .metadata included, sorted by name


def step_folder(step: int) -> str:
    return f"step-{step:08d}"


def temporary_folder(step: int) -> str:
    return f".step-{step:08d}.tmp"


def retired_folder(step: int) -> str:
    return f".step-{step:08d}.retired.tmp"


def is_temporary(name: str) -> bool:
    return _TEMPORARY.match(name) is not None


def check_folder(directory: Path) -> None:
    """Raise ValueError when ``directory`` cannot be a folder of sharded checkpoints: not a folder,
    one DCP checkpoint itself (a step folder, or what a plain ``dcp.save`` wrote), or the folder
    of a single-process ``CheckpointManager``, whose manifest and files are not this manager's."""
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"{directory}: not a folder; expected the folder that holds the step-NNNNNNNN folders")
    if os.path.lexists(directory / METADATA):
        raise ValueError(f"{directory}: holds one DCP checkpoint (its {METADATA} file), not a folder of "
                         f"them; expected the folder above it ({directory.parent}) or a folder of its own")
    if os.path.lexists(directory / SINGLE_PROCESS_MANIFEST) or checkpoint_files(directory):
        raise ValueError(f"{directory}: holds a single-process CheckpointManager's checkpoints "
                         f"({SINGLE_PROCESS_MANIFEST}, ckpt-NNNNNNNN.pt); expected a folder of its own "
                         f"for sharded checkpoints ({MANIFEST})")


def parse_step(raw: Any) -> StepEntry:
    """One step of the manifest, its types checked; raises ValueError on a wrong shape."""
    if not isinstance(raw, dict) or set(raw) != {"step", "folder", "world_size", "shards"}:
        raise ValueError(f"not a step entry: {raw!r}")
    step, folder, world, shards = raw["step"], raw["folder"], raw["world_size"], raw["shards"]
    for value, kind in ((step, int), (world, int), (folder, str), (shards, list)):
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ValueError(f"not a step entry: {raw!r}")
    return StepEntry(step, folder, world, tuple(parse_entry(shard) for shard in shards))


def _plain(entry: StepEntry) -> bool:
    """Whether every name in ``entry`` is one this module writes (anything else is never opened)."""
    return (entry.folder == step_folder(entry.step) and entry.world_size > 0
            and any(s.file == METADATA for s in entry.shards)
            and all(s.step == entry.step and SHARD.match(s.file) for s in entry.shards))


def read_steps(directory: Path) -> list[StepEntry] | None:
    """The committed steps, oldest first; None when the manifest is missing or unreadable.
    Entries with a name this module would not write are left out."""
    entries = read_listing(directory / MANIFEST, parse_step)
    if entries is None:
        return None
    named = {e.step: e for e in entries if _plain(e)}
    return [named[step] for step in sorted(named)]


def write_steps(directory: Path, entries: list[StepEntry]) -> None:
    """Atomically replace the manifest (temporary file, fsync, rename, directory fsync)."""
    write_listing(directory / MANIFEST, entries)


def shard_intact(folder: Path, shard: Entry) -> bool:
    """Whether one file of a step still has its recorded size and CRC-32."""
    try:
        with open(folder / shard.file, "rb") as handle:
            return matches(handle, shard)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return False


def rebuild_steps(directory: Path) -> list[StepEntry]:
    """Entries for the step folders that hold a complete DCP checkpoint, oldest first: the
    ``.metadata`` loads and every file it points into is there and long enough. What a lost
    manifest falls back to; a folder gets its final name only once all its files are durable."""
    try:
        names = sorted(p.name for p in directory.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    entries = []
    for name in names:
        match = FOLDER.match(name)
        if match and name == step_folder(int(match.group(1))):
            entry = _complete_step(directory / name, int(match.group(1)))
            if entry is not None:
                entries.append(entry)
    return entries


def _complete_step(folder: Path, step: int) -> StepEntry | None:
    from torch.distributed.checkpoint import FileSystemReader  # torch only when a rebuild needs it

    try:
        metadata = FileSystemReader(folder).read_metadata()
        ends: dict[str, int] = {}
        for info in metadata.storage_data.values():
            ends[info.relative_path] = max(ends.get(info.relative_path, 0), info.offset + info.length)
        shards = []
        for file in sorted({METADATA, *ends}):
            with open(folder / file, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if not SHARD.match(file) or size < ends.get(file, 0):
                    return None
                shards.append(Entry(step, file, crc32_of(handle), size))
    except Exception:  # any way a damaged .metadata or a missing file fails means "not complete"
        return None
    ranks = {int(m.group(2)) for s in shards if (m := SHARD.match(s.file)) and m.group(2) is not None}
    return StepEntry(step, folder.name, max(ranks, default=0) + 1, tuple(shards))
