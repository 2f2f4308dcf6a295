"""The loss-spike guard's settings (:mod:`tooling.resilience.loss_spike`), with the reasons for each default."""
from __future__ import annotations

import enum
from dataclasses import dataclass


class Remedy(enum.Enum):
    ROLLBACK = "rollback"  # to a checkpoint from before the spike, skipping the data that led to it
    LOWER_LR = "lower-lr"  # carry on with a lower learning rate for a while
    ROLLBACK_LOWER_LR = "rollback-lower-lr"  # both: OPT-175B's usual answer


@dataclass(frozen=True)
class SpikeConfig:
    # the baseline: the last `window` healthy steps; judged only once it holds `min_history`
    window: int = 100
    min_history: int = 20
    # the first steps' loss falls fast and their learning rate warms up: nothing in them is a spike
    warmup: int = 100
    # a spike: the loss more than `threshold` robust deviations (MAD x 1.4826) above the median;
    # six is beyond what noise does in millions of steps, far below what a divergence does
    threshold: float = 6.0
    # the gradient norm is noisier (clipping makes that harmless): its own, higher threshold; None: loss alone
    grad_threshold: float | None = 10.0
    # over once back within this share of the threshold (a spike hovering at the threshold is not over)
    recover: float = 0.5
    # the deviation taken as at least this share of the median: a loss flat to its last digit is no hair trigger
    min_deviation: float = 0.01
    # steps a spike may last and still be its own business; past them, the remedy
    patience: int = 10
    remedy: Remedy = Remedy.ROLLBACK
    # healthy steps before the spike whose batches are skipped too: the data that led to it
    skip_before: int = 10
    lr_factor: float = 0.5
    lr_steps: int = 200
    # the max_spikes-th remedy within halt_window checked steps halts instead: rollbacks are not helping
    max_spikes: int = 3
    halt_window: int = 2000

    def validate(self) -> None:
        """Raise ValueError naming the first setting out of its range."""
        limits = [("window", self.window >= 3, "at least 3"),
                  ("min_history", 3 <= self.min_history <= self.window, "between 3 and window"),
                  ("warmup", self.warmup >= 0, "at least 0"),
                  ("threshold", self.threshold > 0, "above 0"),
                  ("grad_threshold", self.grad_threshold is None or self.grad_threshold > 0, "above 0, or None"),
                  ("recover", 0 < self.recover <= 1, "in (0, 1]"),
                  ("min_deviation", self.min_deviation >= 0, "at least 0"),
                  ("patience", self.patience >= 0, "at least 0"),
                  ("skip_before", self.skip_before >= 0, "at least 0"),
                  ("lr_factor", 0 < self.lr_factor <= 1, "in (0, 1]"),
                  ("lr_steps", self.lr_steps >= 1, "at least 1"),
                  ("max_spikes", self.max_spikes >= 1, "at least 1"),
                  ("halt_window", self.halt_window >= 1, "at least 1")]
        for name, ok, expected in limits:
            if not ok:
                raise ValueError(f"SpikeConfig.{name} must be {expected}, got {getattr(self, name)!r}")
        if not isinstance(self.remedy, Remedy):
            raise ValueError(f"SpikeConfig.remedy must be a Remedy ({', '.join(r.value for r in Remedy)}), "
                             f"got {self.remedy!r}")
