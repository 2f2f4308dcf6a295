"""Rank 0's part of committing one step of a sharded checkpoint: the room check it hands DCP's
writer before any rank writes, and the publish once every rank has reported its files durable
(rename the step's temporary folder whole, fsync the folder, write the manifest last, rotate out
the steps beyond ``keep``).

The protocol that calls these, on every rank, is in
:mod:`~tooling.resilience.distributed_checkpoint`; the folder's layout and manifest in
:mod:`~tooling.resilience.dcp_manifest`.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from tooling.fs.atomic import fsync_path
from tooling.resilience.capacity import Shortfall, shortfall
from tooling.resilience.dcp_manifest import StepEntry, retired_folder, step_folder, temporary_folder, write_steps
from tooling.resilience.dcp_shards import RoomCheck
from tooling.resilience.folder import retire, unlink_all
from tooling.resilience.manifest import Entry
from tooling.resilience.saving import free_space, mib


@dataclass(frozen=True)
class Published:
    """What rank 0's commit of a step came to."""
    outcome: str | Shortfall | None  # why the step was not committed, or None: it was
    kept: list[StepEntry]  # the manifest's steps now, oldest first (unchanged when not committed)
    rotation: threading.Thread | None = None  # the deletion of the steps rotated out, still running


def room_check(directory: Path, step: int, entries: list[StepEntry]) -> RoomCheck:
    """Rank 0's check, from DCP's global plan, that the shared file system has room for the
    step: the larger of the newest step's files and the bytes planned now, and an inode for
    each rank's file, DCP's .metadata and the manifest's new copy."""
    last = sum(s.bytes for s in entries[-1].shards) if entries else 0

    def check(planned: int, ranks: int) -> Shortfall | None:
        estimate, basis = ((last, "the last step's files") if last >= planned
                           else (planned, "the step's planned writes"))
        return shortfall(directory, step, estimate=estimate, basis=basis, files=ranks + 2,
                         what="each rank's file, its .metadata and the manifest's new copy")
    return check


def publish(directory: Path, step: int, reports: list[list[Entry] | str], room: Shortfall | None,
            entries: list[StepEntry], keep: int) -> Published:
    """Rank 0: commit the step if every rank's files are durable; else say why not. ``entries``
    is the manifest as rank 0 last wrote it, ``keep`` how many steps it names at most."""
    temporary, final = directory / temporary_folder(step), directory / step_folder(step)
    if room is not None:  # refused in DCP's plan, before any rank wrote: only DCP's empty folder to remove
        unlink_all([temporary])
        return Published(room, entries)
    failed = [report for report in reports if isinstance(report, str)]
    if failed:  # DCP reports one rank's failure on every rank: say it once, with the free space
        free = free_space(directory)  # torch's writer says "unexpected pos", not "disk full"
        unlink_all([temporary])
        return Published(f"{directory}: step {step} was not committed ({failed[0]}); {mib(free)} free there; "
                         "its temporary folder was removed", entries)
    shards = tuple(sorted((shard for report in reports for shard in report), key=lambda s: s.file))
    entry = StepEntry(step, final.name, len(reports), shards)
    named = sorted([e for e in entries if e.step != step] + [entry], key=lambda e: e.step)
    kept, dropped = named[-keep:], named[:-keep]
    try:
        unlink_all([final])  # a step folder no manifest named (its commit was killed), or this step saved again
        temporary.rename(final)
        fsync_path(directory)
        write_steps(directory, kept)  # written last: now the step exists
    except OSError as exc:
        unlink_all([temporary] + ([final] if all(e.step != step for e in entries) else []))
        return Published(f"{directory}: committing step {step} failed ({type(exc).__name__}: {exc})", entries)
    return Published(None, kept, retire(directory, [(e.folder, retired_folder(e.step)) for e in dropped]))
