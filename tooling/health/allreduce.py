"""The pre-flight's tiny all-reduce (gloo), built so that a wrong sum names the rank it came from.

Each rank puts ``rank + 1`` in its own slot of a vector of one slot per rank and zeros elsewhere;
summed, slot ``r`` must read ``r + 1``. A slot that does not holds the part of rank ``r`` that
was lost or corrupted on its way, so the node is named, not only the collective. It runs over the
job's store (:class:`tooling.health.rendezvous.Exchange`) with its own timeout, so a rank that
never joins or dies half-way costs the timeout, not gloo's default half hour.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import Any

from tooling.health.rendezvous import Place, gist


@dataclass(frozen=True)
class Summed:
    """How the all-reduce ended on one rank."""
    seconds: float
    wrong: dict[int, float] = field(default_factory=dict)  # rank -> what its slot read
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "wrong": {str(k): v for k, v in self.wrong.items()}}

    @staticmethod
    def from_json(data: dict[str, Any]) -> Summed:
        return Summed(float(data["seconds"]), {int(k): float(v) for k, v in data["wrong"].items()}, data["error"])


def part(rank: int, world: int) -> list[float]:
    """This rank's contribution: ``rank + 1`` in its own slot."""
    return [float(rank + 1) if slot == rank else 0.0 for slot in range(world)]


def wrong_slots(summed: list[float]) -> dict[int, float]:
    """The slots whose sum is not their rank's part: rank -> what it read."""
    return {rank: value for rank, value in enumerate(summed) if value != rank + 1}


def all_reduce(store: Any, where: Place, *, timeout: float) -> Summed:
    """The all-reduce across the job's ranks, over a gloo group made on ``store``."""
    import torch
    from torch import distributed

    started = time.monotonic()
    try:
        distributed.init_process_group("gloo", store=distributed.PrefixStore("gloo", store), rank=where.rank,
                                       world_size=where.world, timeout=timedelta(seconds=timeout))
        try:
            tensor = torch.tensor(part(where.rank, where.world), dtype=torch.float64)
            distributed.all_reduce(tensor)
            return Summed(time.monotonic() - started, wrong_slots(tensor.tolist()))
        finally:
            distributed.destroy_process_group()
    except (RuntimeError, OSError, ValueError) as exc:  # c10d's errors are RuntimeErrors
        return Summed(time.monotonic() - started, error=gist(exc))
