"""The NaN guard: a non-finite loss or gradient norm never reaches the optimizer.

Call :meth:`NaNGuard.check` after ``backward()`` and before ``optimizer.step()``. It logs loss
and gradient norm of every step to a JSON-lines file (the trend before a NaN is the clue) and
says what to do: step, skip the step, roll back to the last good checkpoint with a lower
learning rate (``rollback``), or skip until ``max_bad_steps`` bad steps in a row and then halt
(``halt``). The guard decides; the training loop acts (see labs/03-nan-guard/train.py).

A loop whose gradients are sharded or all-reduced (FSDP, DDP, several nodes) passes the norm it
has for the whole job (``check(step, loss, grad_norm=norm)``) instead of its parameters, so every
rank gets the same verdict. :meth:`NaNGuard.message` is the training log's line for a verdict,
worded so that ``tooling watch`` files it as the catalogue's training.nan and signed ``handled_by``
the automation :data:`AUTOMATION`, unless the guard halts: then a person is needed.

Each step's record also goes to every sink passed in ``sinks``: :class:`TensorBoardSink` writes
TensorBoard event files (offline by nature: ``tensorboard --logdir DIR`` reads them later), and
any callable taking the record works too, e.g. for wandb in offline mode
(``WANDB_MODE=offline``): ``sinks=[lambda r: wandb.log(r, step=r["step"])]``.
"""
from __future__ import annotations

import enum
import math
from pathlib import Path
from typing import Any, Iterable, Sequence

import torch

from tooling.resilience.step_log import Sink, StepLog

# the id in tooling/catalogue/automations.yaml (this package reads nothing of the catalogue)
AUTOMATION = "nan-guard"


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


class TensorBoardSink:
    """Loss, gradient norm, training step and the running count of bad steps as TensorBoard scalars.

    The x axis counts every checked step, the ones repeated after a rollback included: keyed by
    the training step, TensorBoard would discard everything after the step a rollback returns
    to (it treats a step going backwards as a restart), the NaN among them.
    """

    def __init__(self, log_dir: str | Path) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as error:  # torch imports it lazily; the package is optional
            raise ValueError("TensorBoardSink needs the tensorboard package (pip install tensorboard)") from error
        self._writer = SummaryWriter(log_dir=str(log_dir))
        self._bad = 0
        self._checked = 0

    def __call__(self, record: dict[str, Any]) -> None:
        x = self._checked
        self._checked += 1
        self._bad += 0 if record["finite"] else 1
        # NaN and inf are written as they are: TensorBoard shows them, which is the point
        self._writer.add_scalar("nan_guard/loss", record["loss"], x)
        self._writer.add_scalar("nan_guard/grad_norm", record["grad_norm"], x)
        self._writer.add_scalar("nan_guard/step", record["step"], x)
        self._writer.add_scalar("nan_guard/bad_steps", self._bad, x)

    def close(self) -> None:
        self._writer.close()


_norm = grad_norm  # check()'s keyword of the same name hides the function there


class NaNGuard:
    def __init__(self, *, policy: Policy | str = Policy.SKIP, max_bad_steps: int = 3,
                 lr_factor: float = 0.5, log_path: str | Path | None = None,
                 sinks: Sequence[Sink] = ()) -> None:
        self.policy = Policy(policy)
        if max_bad_steps < 1:
            raise ValueError(f"max_bad_steps must be at least 1, got {max_bad_steps}")
        if not 0 < lr_factor <= 1:
            raise ValueError(f"lr_factor must be in (0, 1], got {lr_factor}")
        self.max_bad_steps, self.lr_factor = max_bad_steps, lr_factor
        self.bad_in_a_row = 0
        self.bad_total = 0
        self._log = StepLog(log_path, sinks)
        self.last: dict[str, Any] | None = None  # the last step's record: its numbers for a loss-spike guard

    def check(self, step: int, loss: torch.Tensor, parameters: Iterable[torch.nn.Parameter] | None = None, *,
              grad_norm: torch.Tensor | float | None = None) -> Verdict:
        """The verdict on one step, from ``parameters``' gradients or the job's ``grad_norm``."""
        if (parameters is None) == (grad_norm is None):
            raise ValueError("NaNGuard.check takes either the parameters or their gradient norm, not both or neither")
        norm = _norm(parameters) if parameters is not None else torch.as_tensor(grad_norm, dtype=torch.float32)
        # one host sync for both numbers: the price of a guard that looks every step
        loss_value, norm_value = torch.stack([loss.detach().float().reshape(()), norm.float()]).tolist()
        finite = math.isfinite(loss_value) and math.isfinite(norm_value)
        self.last = {"step": step, "loss": loss_value, "grad_norm": norm_value, "finite": finite}
        self._log.write(self.last)
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

    def message(self, verdict: Verdict) -> str | None:
        """The training log's line for ``verdict`` on the last step checked; None for a healthy step."""
        if verdict is Verdict.STEP or self.last is None:
            return None
        done = {Verdict.SKIP: "step skipped", Verdict.ROLLBACK: "rolling back to the last good checkpoint",
                Verdict.HALT: f"{self.bad_in_a_row} bad steps in a row: halting, a person is needed"}[verdict]
        line = (f"NaN guard: step {self.last['step']}: non-finite loss ({self.last['loss']}) or gradient norm "
                f"({self.last['grad_norm']}); {done}")
        return line if verdict is Verdict.HALT else f"{line} [handled_by: {AUTOMATION}]"

    def lower_lr(self, optimizer: torch.optim.Optimizer) -> float:
        """Scale every parameter group's learning rate by ``lr_factor``; return the first."""
        for group in optimizer.param_groups:
            group["lr"] *= self.lr_factor
        return float(optimizer.param_groups[0]["lr"])

    def close(self) -> None:
        """Close the log and every sink that has a ``close`` method."""
        self._log.close()
