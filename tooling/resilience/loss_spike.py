"""The loss-spike guard: a finite spike or a divergence, caught from the loss and gradient-norm trend.

The NaN guard sees only non-finite values; most divergences stay finite. Large runs handle them
the same few ways (OPT-175B's logbook, BLOOM's 104B trials, PaLM: "restarted from a checkpoint
roughly 100 steps before the spike started, and skipped roughly 200-500 data batches"): roll back
to a checkpoint from before the spike and skip the data that led to it, lower the learning rate for
a while, or stop once spikes keep coming. This guard tells which, step by step.

Call :meth:`LossSpikeGuard.check` once a step with the loss and the gradient norm the loop has
anyway (``clip_grad_norm_`` returns it; so does the NaN guard, as ``NaNGuard.last``). A step is a
spike when its loss (or its gradient norm) lies more than ``threshold`` robust deviations above
the median of the last ``window`` healthy steps (:class:`~tooling.resilience.baseline.RobustBaseline`);
nothing is judged in the first ``warmup`` steps, while the loss falls fast. A spike is watched
(:attr:`Verdict.WATCH`: logged, the step taken as usual) for up to ``patience`` steps: back within
``recover`` times the threshold, it recovered on its own and is only logged. Past its patience,
the remedy is returned (:attr:`Verdict.ROLLBACK` with the checkpoint step to go back to and the
data window to skip, or :attr:`Verdict.LOWER_LR`); the ``max_spikes``-th remedy within
``halt_window`` steps is :attr:`Verdict.HALT` instead. The guard decides; the loop acts (see
labs/03-nan-guard/spike.py).

Every decision but a plain step is logged (JSON lines, and any sinks) with the numbers behind it,
and a spike's start, end and remedy each have a :attr:`Decision.message` for the training log,
worded so that ``tooling watch`` files it as the catalogue's training.divergence (a spike past its
patience) or training.loss-spike-recovered, ``handled_by`` the automation :data:`AUTOMATION`.
"""
from __future__ import annotations

import enum
import math
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import torch

from tooling.resilience.baseline import RobustBaseline
from tooling.resilience.spike_config import Remedy, SpikeConfig
from tooling.resilience.step_log import Sink, StepLog

__all__ = ["AUTOMATION", "Decision", "LossSpikeGuard", "Remedy", "SpikeConfig", "Verdict"]

# the id in tooling/catalogue/automations.yaml (this package reads nothing of the catalogue)
AUTOMATION = "divergence-rollback"


class Verdict(enum.Enum):
    STEP = "step"  # healthy: step as usual
    WATCH = "watch"  # a spike within its patience: logged, step as usual
    ROLLBACK = "rollback"  # load the newest verified checkpoint at or before rollback_to, skip the batches in skip
    LOWER_LR = "lower-lr"  # scale the learning rate by lr_factor for lr_steps steps, carry on
    HALT = "halt"  # spikes keep coming: stop, a person is needed


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    step: int
    loss: float
    grad_norm: float | None
    event: str = "step"  # step, spike (one starts), watch, recovered, rollback, lower-lr, halt
    message: str | None = None  # a line for the training log, where there is one to write
    numbers: dict[str, Any] = field(default_factory=dict)
    rollback_to: int | None = None  # the newest checkpoint at or before this step has seen none of skip
    skip: tuple[int, int] | None = None  # first and last batch to skip, inclusive
    lr_factor: float | None = None
    lr_steps: int | None = None


@dataclass
class _Spike:
    start: int  # its first step
    steps: int  # steps since it started, itself included
    batches: list[int]
    before: list[tuple[int, int]]  # (step, batch) of the healthy steps just before it
    peak: float  # the highest loss deviation seen in it


class LossSpikeGuard:
    def __init__(self, config: SpikeConfig | None = None, *, log_path: str | Path | None = None,
                 sinks: Sequence[Sink] = ()) -> None:
        self.config = config or SpikeConfig()
        self.config.validate()
        self.losses = RobustBaseline(self.config.window)
        self.norms = RobustBaseline(self.config.window)
        self.checked = 0  # steps checked, repeats after a rollback included: the guard's own clock
        self.remedies: deque[int] = deque()  # the clock at each remedy, within halt_window
        self.spikes = 0  # spikes seen, recovered or not
        self._recent: deque[tuple[int, int]] = deque(maxlen=self.config.skip_before)
        self._spike: _Spike | None = None
        self._log = StepLog(log_path, sinks)

    def check(self, step: int, loss: torch.Tensor | float, grad_norm: torch.Tensor | float | None = None,
              *, batch: int | None = None) -> Decision:
        """Judge one step, before ``optimizer.step()``. ``batch``: which batch of the data the step
        trained on (default: the step), so that the window to skip names batches, not steps."""
        loss_value, norm_value = _floats(loss, grad_norm)
        self.checked += 1
        batch = step if batch is None else batch
        config = self.config
        if self.checked <= config.warmup or len(self.losses) < config.min_history:
            self._healthy(step, batch, loss_value, norm_value)
            return Decision(Verdict.STEP, step, loss_value, norm_value)
        z = self.losses.above(loss_value, floor=config.min_deviation)
        judged = norm_value is not None and len(self.norms) >= config.min_history
        gz = self.norms.above(norm_value, floor=config.min_deviation) if judged else 0.0  # type: ignore[arg-type]
        grad_limit = config.grad_threshold if config.grad_threshold is not None else math.inf
        spike = self._spike
        if spike is None:
            if z <= config.threshold and gz <= grad_limit:
                self._healthy(step, batch, loss_value, norm_value)
                return Decision(Verdict.STEP, step, loss_value, norm_value)
            self.spikes += 1
            self._spike = spike = _Spike(step, 1, [batch], list(self._recent), z)
            numbers = self._numbers(loss_value, norm_value)
            if config.patience > 0:
                return self._decide(Verdict.WATCH, step, "spike", numbers, spike, self._started_text(step, numbers),
                                    handled=False)
            return self._remedy(step, spike, numbers)
        numbers = self._numbers(loss_value, norm_value)
        spike.steps += 1
        spike.batches.append(batch)
        spike.peak = max(spike.peak, z)
        if z <= config.threshold * config.recover and gz <= grad_limit * config.recover:
            self._spike = None
            self._healthy(step, batch, loss_value, norm_value)
            text = self._recovered_text(step, spike, numbers)
            return self._decide(Verdict.STEP, step, "recovered", numbers, spike, text)
        if spike.steps <= config.patience:
            return self._decide(Verdict.WATCH, step, "watch", numbers, spike, None)
        return self._remedy(step, spike, numbers)

    def _healthy(self, step: int, batch: int, loss: float, norm: float | None) -> None:
        if math.isfinite(loss):
            self.losses.add(loss)
        if norm is not None and math.isfinite(norm):
            self.norms.add(norm)
        self._recent.append((step, batch))

    def _numbers(self, loss: float, norm: float | None) -> dict[str, Any]:
        floor = self.config.min_deviation
        median, deviation, z = self.losses.score(loss, floor=floor)
        numbers: dict[str, Any] = {"loss": loss, "loss_median": median, "loss_deviation": deviation, "loss_z": z}
        if norm is not None and len(self.norms) >= self.config.min_history:
            median, deviation, z = self.norms.score(norm, floor=floor)
            numbers.update(grad_norm=norm, grad_norm_median=median, grad_norm_deviation=deviation, grad_norm_z=z)
        elif norm is not None:
            numbers["grad_norm"] = norm
        return numbers

    def _remedy(self, step: int, spike: _Spike, numbers: dict[str, Any]) -> Decision:
        config = self.config
        self._spike = None
        while self.remedies and self.checked - self.remedies[0] >= config.halt_window:
            self.remedies.popleft()
        self.remedies.append(self.checked)
        lasted = f"loss spike detected for {spike.steps} steps (patience {config.patience}): {_why(numbers)}"
        if len(self.remedies) >= config.max_spikes:
            text = (f"step {step}: {lasted}; the {_ordinal(len(self.remedies))} remedy within {config.halt_window} "
                    f"steps: halting, a person is needed")
            return self._decide(Verdict.HALT, step, "halt", numbers, spike, text, handled=False)
        lower = config.remedy in (Remedy.LOWER_LR, Remedy.ROLLBACK_LOWER_LR)
        lr = {"lr_factor": config.lr_factor, "lr_steps": config.lr_steps} if lower else {}
        lr_text = f"learning rate x{config.lr_factor:g} for {config.lr_steps} steps" if lower else ""
        if config.remedy is Remedy.LOWER_LR:
            text = f"step {step}: {lasted}; {lr_text}"
            return self._decide(Verdict.LOWER_LR, step, "lower-lr", numbers, spike, text, **lr)
        first_step, first_batch = spike.before[0] if spike.before else (spike.start, spike.batches[0])
        skip = (min(first_batch, *spike.batches), max(spike.batches))
        self._recent.clear()  # the loop goes back: these steps will be taken again, on other batches
        text = (f"step {step}: {lasted}; rolling back to the newest checkpoint at or before step {first_step}, "
                f"skipping batches {skip[0]}-{skip[1]}" + (f", {lr_text}" if lower else ""))
        return self._decide(Verdict.ROLLBACK, step, "rollback", numbers, spike, text, rollback_to=first_step,
                            skip=skip, **lr)

    def _decide(self, verdict: Verdict, step: int, event: str, numbers: dict[str, Any], spike: _Spike,
                text: str | None, *, handled: bool = True, **remedy: Any) -> Decision:
        """Log the decision with its numbers; ``handled``: its line is signed as the automation's."""
        message = None if text is None else f"loss-spike guard: {text}"
        if message is not None and handled:
            message += f" [handled_by: {AUTOMATION}]"
        record = {"step": step, "decision": event, **numbers, "threshold": self.config.threshold,
                  "patience": self.config.patience, "spike_start": spike.start, "spike_steps": spike.steps,
                  "spikes": self.spikes, "remedies_in_window": len(self.remedies), **remedy,
                  **({"message": message} if message else {})}
        self._log.write(record)
        return Decision(verdict, step, numbers["loss"], numbers.get("grad_norm"), event, message, numbers, **remedy)

    def _started_text(self, step: int, numbers: dict[str, Any]) -> str:
        return f"step {step}: spike: {_why(numbers)}; watching it for up to {self.config.patience} steps"

    def _recovered_text(self, step: int, spike: _Spike, numbers: dict[str, Any]) -> str:
        within = self.config.threshold * self.config.recover
        return (f"step {step}: not a persistent loss spike: back within {within:g} deviations of its median "
                f"after {spike.steps - 1} steps (patience {self.config.patience}; it peaked {spike.peak:.1f} "
                f"deviations above the median); loss {numbers['loss']:.4g}")

    def close(self) -> None:
        """Close the log and every sink that has a ``close`` method."""
        self._log.close()


def _floats(loss: torch.Tensor | float, norm: torch.Tensor | float | None) -> tuple[float, float | None]:
    """The two numbers as Python floats, with one host sync where both are tensors."""
    if isinstance(loss, torch.Tensor) and isinstance(norm, torch.Tensor):
        values = torch.stack([loss.detach().float().reshape(()), norm.detach().float().reshape(())]).tolist()
        return values[0], values[1]
    loss_value = float(loss.detach()) if isinstance(loss, torch.Tensor) else float(loss)
    norm_value = None if norm is None else float(norm.detach()) if isinstance(norm, torch.Tensor) else float(norm)
    return loss_value, norm_value


def _why(numbers: dict[str, Any]) -> str:
    """The numbers behind a decision, in words: 'loss 5.21, 41.2 deviations above its median 1.03 (...)'."""
    text = (f"loss {numbers['loss']:.4g}, {numbers['loss_z']:.1f} deviations above its median "
            f"{numbers['loss_median']:.4g} (deviation {numbers['loss_deviation']:.3g})")
    if "grad_norm_z" in numbers:
        text += (f"; grad norm {numbers['grad_norm']:.4g}, {numbers['grad_norm_z']:.1f} above its median "
                 f"{numbers['grad_norm_median']:.4g}")
    return text


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
