"""Self-check of lab 3: the guard catches the NaN a too-high learning rate provokes, the run
recovers (rollback) or carries on (skip) or stops (halt), no saved weight is ever non-finite,
and the chart of the steps before the NaN is written.

The spike exercise (spike.py): a bad batch's spike is caught, rolled back to a checkpoint from
before it with the batches that led to it skipped, and the loss comes back to its pre-spike band;
a milder spike that recovers within its patience is logged, not acted on; lowering the learning
rate alone does not undo the damage, and the third remedy halts; 2,000 healthy steps see no action;
and `tooling watch` files each from the training log as the right failure mode, handled_by the guard.

Run: python labs/03-nan-guard/check.py  (exit status 0 when every check passes)
"""
from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
import yaml

from tooling.resilience.baseline import RobustBaseline
from tooling.resilience.checkpoint import CheckpointManager

TRAIN = Path(__file__).with_name("train.py")
SPIKE = Path(__file__).with_name("spike.py")


def run(out: Path, policy: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TRAIN), "--out", str(out), "--policy", policy, *extra],
                          capture_output=True, text=True, timeout=300)


def spike_run(out: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    """spike.py in ``out`` (its training log is out/train.log), and its metrics, in log order."""
    result = subprocess.run([sys.executable, str(SPIKE), "--out", str(out), *extra], capture_output=True, text=True,
                            timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
    (out / "train.log").write_text(result.stdout)
    return result, [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def tooling(*args: str, cwd: Path) -> str:
    result = subprocess.run([sys.executable, "-m", "tooling", *args], cwd=cwd, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, f"tooling {' '.join(args)}: {result.stdout}{result.stderr}"
    return result.stdout


def check_spike(tmp: Path) -> list[str]:
    """The spike exercise; what it showed, in lines."""
    rolled, metrics = spike_run(tmp / "spike")
    assert rolled.returncode == 0, rolled.stdout + rolled.stderr
    start = next(i for i, m in enumerate(metrics) if m["decision"] == "spike")
    back = next(i for i, m in enumerate(metrics) if m["decision"] == "rollback")
    bad = metrics[start]["batch"]
    assert "loss spike detected for 11 steps" in rolled.stdout and "[handled_by: divergence-rollback]" in rolled.stdout
    decision = json.loads((tmp / "spike" / "decisions.jsonl").read_text().splitlines()[-1])
    first, last = decision["skip"]
    assert first <= bad <= last and decision["rollback_to"] <= first, decision
    resumed = metrics[back + 1]
    assert resumed["step"] <= decision["rollback_to"], "the rollback must go back to before the skipped batches"
    again = [m["batch"] for m in metrics[back + 1:]]
    assert not any(first <= b <= last for b in again), "a skipped batch was trained on after the rollback"
    before = baseline([m["loss"] for m in metrics[start - 100:start]])
    after = statistics.median(m["loss"] for m in metrics[back + 1:back + 101])
    band = before.median() + 3 * before.deviation()
    assert metrics[back]["loss"] > band, "the spike must still be on when the guard acts"
    assert after <= band, f"after the rollback the loss's median {after:.3f} is above the pre-spike band ({band:.3f})"
    shown = [f"bad batch {bad}: caught at step {metrics[start]['step']}, rolled back to step {resumed['step']}, "
             f"batches {first}-{last} skipped; loss back to {after:.3f} (pre-spike band up to {band:.3f})"]

    recovered, mild = spike_run(tmp / "mild", "--bad-scale", "4", "--steps", "700")
    assert recovered.returncode == 0 and "not a persistent loss spike" in recovered.stdout, recovered.stdout
    assert {m["decision"] for m in mild} == {"step", "spike", "watch", "recovered"}, "a recovered spike is not acted on"
    lowered, _ = spike_run(tmp / "lower", "--remedy", "lower-lr", "--steps", "700")
    assert lowered.returncode == 3 and "the 3rd remedy within 2000 steps: halting" in lowered.stdout, lowered.stdout
    shown.append("a milder spike recovered within its patience: logged only; lowering the LR alone: halted at the "
                 "3rd remedy")

    healthy, steps = spike_run(tmp / "healthy", "--bad-batch", "-1", "--steps", "2000")
    assert healthy.returncode == 0 and "0 spikes seen, 0 rolled back" in healthy.stdout, healthy.stdout
    assert len(steps) == 2000 and {m["decision"] for m in steps} == {"step"}, "a healthy run was acted on"
    assert (tmp / "healthy" / "decisions.jsonl").read_text() == ""
    shown.append("2000 healthy steps: no spike, no action")

    repo = tmp / "repo"
    repo.mkdir()
    (repo / "mkdocs.yml").write_text("site_name: lab 3 scratch\n")
    tooling("new-run", "lab3", cwd=repo)
    for out in ("spike", "mild", "healthy"):
        tooling("watch", str(tmp / out / "train.log"), "--run", "lab3", "--once", "--state",
                str(tmp / f"{out}.offsets"), cwd=repo)
    filed = sorted((yaml.safe_load(p.read_text()) for p in (repo / "incidents").glob("INC-*.yaml")),
                   key=lambda d: d["id"])
    assert [(d["failure_mode"], d.get("handled_by")) for d in filed] == [
        ("training.divergence", "divergence-rollback"), ("training.loss-spike-recovered", "divergence-rollback")], filed
    tooling("validate", "--strict", cwd=repo)
    shown.append(f"tooling watch filed {filed[0]['id']} ({filed[0]['failure_mode']}) and {filed[1]['id']} "
                 f"({filed[1]['failure_mode']}), both handled_by divergence-rollback; validate --strict passes")
    return shown


def baseline(values: list[float]) -> RobustBaseline:
    found = RobustBaseline(len(values))
    for value in values:
        found.add(value)
    return found


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
        for line in check_spike(Path(tmp)):
            print(line)
    print("lab 3 self-check: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
