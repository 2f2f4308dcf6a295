"""The trainer's side of the injected faults that happen inside a training process (lab 7).

Most of the campaign's faults come from outside, as they do on a cluster: a line in a node's kernel
log, a signal from the scheduler, a full file system, a damaged checkpoint file. Three stand for
causes that live inside the job, so the trainer reads them here, from files the campaign writes
into OUT/inject/ (one JSON object each, read again whenever the folder changes):

- ``{"kind": "nan", "at": P, "rank": R}``: rank R's batch of the step that starts at data
  position P holds NaN (a corrupt sample);
- ``{"kind": "spike", "at": P, "length": L}``: the L steps from position P read a bad shard, its
  targets 20 times what they should be (lab 3's bad batch, L of them);
- ``{"kind": "hang", "at": P, "rank": R}``: rank R stops at the first step at or after P, as a
  rank stuck in a data loader or a dead GPU does (lab 4's stall); once only.

Bad data stays bad, as a corrupt shard does: a loop that reads position P again gets the same
batch. The fourth is the emulated cluster's: a rank whose node's kernel log (the stand-in that
``scripts/slurm-cluster inject NODE xid 79`` appends to) says its GPU fell off the bus after the
rank started stops too, as a rank on a lost GPU does.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import torch

SPIKE_SCALE = 20.0  # lab 3's bad batch: the model does not get over it alone
GONE = "fallen off the bus"  # the driver's words for Xid 79


class Injected:
    """The faults written into ``folder`` so far, and this rank's node's kernel log."""

    def __init__(self, folder: Path, rank: int, world: int, kernel_log: Path | None) -> None:
        self.folder, self.rank, self.world = folder, rank, world
        self.kernel_log = kernel_log
        self._seen = kernel_log.stat().st_size if kernel_log is not None and kernel_log.exists() else 0
        self._stamp = -1
        self.faults: list[tuple[Path, dict]] = []  # type: ignore[type-arg]

    def _read(self) -> None:
        try:
            stamp = self.folder.stat().st_mtime_ns
        except FileNotFoundError:
            return
        if stamp == self._stamp:  # one stat a step while nothing changes
            return
        self._stamp = stamp
        self.faults = [(path, json.loads(path.read_text())) for path in sorted(self.folder.glob("*.json"))]

    def batch(self, position: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        """This rank's batch of the step that starts at ``position`` (lab 6's data), with the
        injected bad data in it."""
        self._read()
        x = torch.randn(64, 32, generator=torch.Generator().manual_seed(seed + position + self.rank))
        y = x[:, :1].sin()
        for _, fault in self.faults:
            if fault["kind"] == "nan" and fault["at"] == position and fault["rank"] == self.rank:
                x = torch.full_like(x, float("nan"))
            elif fault["kind"] == "spike" and fault["at"] <= position < fault["at"] + fault["length"] * self.world \
                    and (position - fault["at"]) % self.world == 0:
                y = y * SPIKE_SCALE
        return x, y

    def stall_if_stopped(self, position: int) -> None:
        """Block for good where this rank hangs now or its GPU is gone: the job's automation (or a
        person) ends the process, or the collective timeout of the ranks waiting for it."""
        for path, fault in self.faults:
            if fault["kind"] == "hang" and fault["rank"] == self.rank and position >= fault["at"]:
                os.replace(path, path.with_suffix(".fired"))  # once: the restarted job does not hang again
                _forever()
        if self.kernel_log is None or not self.kernel_log.exists():
            return
        size = self.kernel_log.stat().st_size
        if size > self._seen:
            with self.kernel_log.open("rb") as log:
                log.seek(self._seen)
                said = log.read().decode(errors="replace")
            self._seen = size
            if GONE in said:
                _forever()


def _forever() -> None:
    while True:
        time.sleep(3600)
