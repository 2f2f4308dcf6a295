"""The NaN guard: a non-finite loss or gradient norm never reaches the optimizer.

Call :meth:`NaNGuard.check` after ``backward()`` and before ``optimizer.step()``. It logs loss
and gradient norm of every step to a JSON-lines file (the trend before a NaN is the clue) and
says what to do: step, skip the step, roll back to the last good checkpoint with a lower
learning rate (``rollback``), or skip until ``max_bad_steps`` bad steps in a row and then halt
(``halt``). The guard decides; the training loop acts (see labs/03-nan-guard/train.py).
"""
from __future__ import annotations

import enum
import json
import math
from pathlib import Path
from typing import Any, Iterable, TextIO

import torch


class Policy(enum.Enum):
    SKIP = "skip"
    ROLLBACK = "rollback"
    HALT = "halt"


class Verdict(enum.Enum):
    STEP = "step"
    SKIP = "skip"
    ROLLBACK = "rollback"
    HALT = "halt"


def grad_norm(parameters: Iterable[torch.nn.Parameter]) -> torch.Tensor:
    """Total L2 norm of all gradients, as one tensor (no host sync until it is read)."""
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.zeros(())
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))


class NaNGuard:
    def __init__(self, *, policy: Policy | str = Policy.SKIP, max_bad_steps: int = 3,
                 lr_factor: float = 0.5, log_path: str | Path | None = None) -> None:
        self.policy = Policy(policy)
        if max_bad_steps < 1:
            raise ValueError(f"max_bad_steps must be at least 1, got {max_bad_steps}")
        if not 0 < lr_factor <= 1:
            raise ValueError(f"lr_factor must be in (0, 1], got {lr_factor}")
        self.max_bad_steps, self.lr_factor = max_bad_steps, lr_factor
        self.bad_in_a_row = 0
        self.bad_total = 0
        self._log: TextIO | None = open(log_path, "a", encoding="utf-8") if log_path else None

    def check(self, step: int, loss: torch.Tensor, parameters: Iterable[torch.nn.Parameter]) -> Verdict:
        norm = grad_norm(parameters)
        # one host sync for both numbers: the price of a guard that looks every step
        loss_value, norm_value = torch.stack([loss.detach().float().reshape(()), norm.float()]).tolist()
        finite = math.isfinite(loss_value) and math.isfinite(norm_value)
        self._write({"step": step, "loss": loss_value, "grad_norm": norm_value, "finite": finite})
        if finite:
            self.bad_in_a_row = 0
            return Verdict.STEP
        self.bad_in_a_row += 1
        self.bad_total += 1
        if self.policy is Policy.ROLLBACK:
            return Verdict.ROLLBACK
        if self.policy is Policy.HALT and self.bad_in_a_row >= self.max_bad_steps:
            return Verdict.HALT
        return Verdict.SKIP

    def lower_lr(self, optimizer: torch.optim.Optimizer) -> float:
        """Scale every parameter group's learning rate by ``lr_factor``; return the first."""
        for group in optimizer.param_groups:
            group["lr"] *= self.lr_factor
        return float(optimizer.param_groups[0]["lr"])

    def _write(self, record: dict[str, Any]) -> None:
        if self._log is not None:
            # json cannot hold NaN/inf portably: write them as strings
            clean = {k: (v if not isinstance(v, float) or math.isfinite(v) else str(v)) for k, v in record.items()}
            self._log.write(json.dumps(clean) + "\n")
            self._log.flush()

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
