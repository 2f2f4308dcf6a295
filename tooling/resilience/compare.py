"""Comparing two runs step by step: the first step, and in it the first layer, that differs.

Record loss, weights and gradients every step (``RunRecorder``), then ``first_divergence``
walks both records in step order and parameter order. Reproducible, in the practical sense,
means final losses of two seeds within 0.001 (``reproducible``), not bit-identical steps.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import torch

REPRODUCIBLE_WITHIN = 0.001


class RunRecorder:
    """Writes ``step-00000042.pt`` holding loss, weights and gradients, in parameter order."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def record(self, step: int, loss: torch.Tensor, model: torch.nn.Module) -> None:
        weights = {n: p.detach().cpu().clone() for n, p in model.named_parameters()}
        grads = {n: p.grad.detach().cpu().clone() for n, p in model.named_parameters() if p.grad is not None}
        torch.save({"loss": float(loss.detach()), "weights": weights, "grads": grads},
                   self.directory / f"step-{step:08d}.pt")


@dataclass(frozen=True)
class Divergence:
    step: int
    what: str  # "loss", "weights" or "grads"
    layer: str | None  # parameter name; None for the loss
    difference: float

    def __str__(self) -> str:
        where = f" in {self.what} of {self.layer}" if self.layer else f" in the {self.what}"
        return f"first divergence at step {self.step}{where} (max abs difference {self.difference:.3g})"


def _steps(directory: Path) -> dict[int, Path]:
    return {int(p.stem.split("-")[1]): p for p in sorted(directory.glob("step-*.pt"))}


def _differences(a: dict, b: dict, tolerance: float) -> Iterator[Divergence]:
    if abs(a["loss"] - b["loss"]) > tolerance or (a["loss"] != a["loss"]) != (b["loss"] != b["loss"]):
        yield Divergence(-1, "loss", None, abs(a["loss"] - b["loss"]))
    for what in ("grads", "weights"):  # gradients first: they differ a step before the weights do
        for name, tensor in a[what].items():
            other = b[what].get(name)
            if other is None or other.shape != tensor.shape:
                yield Divergence(-1, what, name, float("inf"))
                continue
            gap = float((tensor - other).abs().max()) if tensor.numel() else 0.0
            if not gap <= tolerance:  # also true for NaN
                yield Divergence(-1, what, name, gap)


def first_divergence(run_a: str | Path, run_b: str | Path, *, tolerance: float = 0.0) -> Divergence | None:
    """The earliest step where the runs differ by more than ``tolerance``, and its first layer."""
    steps_a, steps_b = _steps(Path(run_a)), _steps(Path(run_b))
    for step in sorted(set(steps_a) & set(steps_b)):
        a = torch.load(steps_a[step], weights_only=True)
        b = torch.load(steps_b[step], weights_only=True)
        found = loss = None
        for difference in _differences(a, b, tolerance):  # one pass; a layer beats the loss
            if difference.layer is not None:
                found = difference
                break
            loss = loss or difference
        found = found or loss
        if found is not None:
            return Divergence(step, found.what, found.layer, found.difference)
    return None


def reproducible(train: Callable[[int], float], *, seeds: tuple[int, int] = (1, 2),
                 within: float = REPRODUCIBLE_WITHIN) -> tuple[bool, float, float]:
    """Train twice with different seeds: reproducible when the final losses are within ``within``."""
    first, second = train(seeds[0]), train(seeds[1])
    return abs(first - second) <= within, first, second
