"""The training budget from a run's inputs: GPU time is only part of what a run costs.

Counting GPU-hours times price alone misses 30-40% of the real cost. The rules: a failure
buffer of 1.3x GPU-hours for a large run and 1.5x for a team's first; checkpoint storage,
flagged once it passes 5% of the GPU cost (it tends to land at 5-10% when checkpoints reach
petabytes); egress for cross-region checkpoint copies; and people: a 24/7 run needs at least
two on the on-call rotation.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tooling.messages import N_, Message, message
from tooling.records.runs import MIN_ROTATION

BUFFER_LARGE_RUN = 1.3
BUFFER_FIRST_RUN = 1.5
STORAGE_WARN_SHARE = 0.05
STORAGE_HIGH_SHARE = 0.10

# The warnings, in English for the CLI and translated on the site (tooling.messages).
STORAGE_HIGH = N_("checkpoint storage is %(share)s of the GPU cost, above 10%%: prune old checkpoints or move them to "
                  "colder storage")
STORAGE_BAND = N_("checkpoint storage is %(share)s of the GPU cost, inside the 5-10%% band where it stops being a "
                  "rounding error")
ROTATION_SMALL = N_("%(people)s person on call: a 24/7 run needs at least %(least)s on the rotation (4 is better)")


@dataclass(frozen=True)
class Budget:
    currency: str
    gpu_cost: float  # GPU-hours x price, as planned
    buffer_factor: float
    gpu_with_buffer: float
    storage: float
    egress: float
    total: float
    storage_share: float  # storage as a share of the planned GPU cost
    people: int
    flags: list[Message] = field(default_factory=list)


def compute(budget: dict[str, Any], *, rotation_size: int) -> Budget:
    """Totals and warnings for one run's ``budget`` inputs; ``rotation_size`` from its on-call."""
    gpu_cost = budget.get("gpu_hours", 0) * budget.get("price_per_gpu_hour", 0)
    factor = BUFFER_FIRST_RUN if budget.get("first_run") else BUFFER_LARGE_RUN
    storage = (budget.get("checkpoint_storage_tb", 0) * budget.get("storage_price_per_tb_month", 0)
               * budget.get("months", 0))
    egress = budget.get("egress_tb", 0) * budget.get("egress_price_per_tb", 0)
    share = storage / gpu_cost if gpu_cost else 0.0
    people = budget.get("people", rotation_size)
    flags = []
    if share > STORAGE_HIGH_SHARE:
        flags.append(message(STORAGE_HIGH, share=f"{share:.0%}"))
    elif share > STORAGE_WARN_SHARE:
        flags.append(message(STORAGE_BAND, share=f"{share:.0%}"))
    if max(people, rotation_size) < MIN_ROTATION:
        flags.append(message(ROTATION_SMALL, people=max(people, rotation_size), least=MIN_ROTATION))
    buffered = gpu_cost * factor
    return Budget(str(budget.get("currency", "")), round(gpu_cost, 2), factor, round(buffered, 2),
                  round(storage, 2), round(egress, 2), round(buffered + storage + egress, 2), share, people, flags)
