"""Self-check of lab 3: the guard catches the NaN a too-high learning rate provokes, the run
recovers (rollback) or carries on (skip) or stops (halt), no saved weight is ever non-finite,
and the chart of the steps before the NaN is written.

Run: python labs/03-nan-guard/check.py  (exit status 0 when every check passes)
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from tooling.resilience.checkpoint import CheckpointManager

TRAIN = Path(__file__).with_name("train.py")


def run(out: Path, policy: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TRAIN), "--out", str(out), "--policy", policy, *extra],
                          capture_output=True, text=True, timeout=300)


def tensorboard_pairs(log_dir: Path) -> list[tuple[float, float]]:
    """(loss, grad norm) of every step as TensorBoard will show them."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(log_dir))
    events.Reload()
    return list(zip((e.value for e in events.Scalars("nan_guard/loss")),
                    (e.value for e in events.Scalars("nan_guard/grad_norm"))))


def all_saved_weights_finite(out: Path) -> bool:
    manager = CheckpointManager(out / "checkpoints")
    for entry in manager.entries:
        assert manager.verify(entry), entry
        state = torch.load(out / "checkpoints" / entry.file, weights_only=False)
        if not all(torch.isfinite(t).all() for t in state["model"].values()):
            return False
    return bool(manager.entries)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        rollback = run(Path(tmp) / "rollback", "rollback", "--tensorboard", str(Path(tmp) / "tb"))
        assert rollback.returncode == 0, rollback.stdout + rollback.stderr
        assert "rolled back to step" in rollback.stdout and "weights finite: True" in rollback.stdout
        metrics = [json.loads(line) for line in (Path(tmp) / "rollback" / "metrics.jsonl").read_text().splitlines()]
        assert any(not m["finite"] for m in metrics), "the learning rate must provoke a NaN"
        chart = (Path(tmp) / "rollback" / "before-nan.svg").read_text()
        assert chart.startswith("<svg") and "before the first NaN" in chart
        assert all_saved_weights_finite(Path(tmp) / "rollback")
        board = tensorboard_pairs(Path(tmp) / "tb")
        first_bad = next(i for i, m in enumerate(metrics) if not m["finite"])
        assert len(board) == len(metrics) and not all(map(math.isfinite, board[first_bad])), \
            "TensorBoard must get every step, the non-finite one included"
        print(rollback.stdout.strip().splitlines()[-1])

        skip = run(Path(tmp) / "skip", "skip")
        assert skip.returncode == 0 and "step skipped" in skip.stdout, skip.stdout
        assert all_saved_weights_finite(Path(tmp) / "skip")
        halt = run(Path(tmp) / "halt", "halt")
        assert halt.returncode == 3 and "halting without saving" in halt.stdout, halt.stdout
        assert all_saved_weights_finite(Path(tmp) / "halt")
        print("skip carried on past the bad steps; halt stopped after 3 in a row; no saved weight is non-finite")
    print("lab 3 self-check: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
