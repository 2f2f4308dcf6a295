"""Lab 3, second exercise: a loss spike that stays finite. One bad batch (its targets in the wrong
units, as a corrupt shard has them) throws the model off; the loss-spike guard sees the loss leave
its running band, watches it for its patience, then rolls back to the newest checkpoint from before
the spike and skips the batches that led to it. The loss comes back to where it was.

Run (from the repository root, with the project's environment: . .venv/bin/activate):

    python labs/03-nan-guard/spike.py --out /tmp/lab3-spike                    # bad batch 600: rolled back, skipped
    python labs/03-nan-guard/spike.py --out /tmp/lab3-spike --bad-scale 4      # a milder one: recovers, only logged
    python labs/03-nan-guard/spike.py --out /tmp/lab3-spike --remedy lower-lr  # no rollback: halts at the 3rd remedy
    python labs/03-nan-guard/spike.py --out /tmp/lab3-spike --bad-batch -1 --steps 2000  # healthy: no action
    python labs/03-nan-guard/spike.py --out /tmp/lab3-spike > /tmp/lab3-spike.log
    tooling watch /tmp/lab3-spike.log --run demo-7b --once                     # filed, handled_by the guard

It writes /tmp/lab3-spike/metrics.jsonl (every step's loss, grad norm, batch and what the guard
decided) and /tmp/lab3-spike/decisions.jsonl (the guard's own log: each decision with its numbers).
Exit status 3 when the guard halts the run.
Self-check: python labs/03-nan-guard/check.py
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from tooling.resilience.checkpoint import CheckpointManager
from tooling.resilience.loss_spike import LossSpikeGuard, Remedy, SpikeConfig, Verdict
from tooling.resilience.nan_guard import grad_norm

STEPS = 1000
LR = 0.02
WARMUP = 50  # steps of linear learning-rate warmup
BAD_BATCH = 600
BAD_SCALE = 20.0  # the bad batch's targets, times this: the model does not get over it alone
SAVE_EVERY = 10
SEED = 0
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def batch(position: int, bad: int, scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The data at ``position`` of the stream: the same batch whenever it is read again; the
    ``bad`` one has its targets ``scale`` times what they should be."""
    generator = torch.Generator().manual_seed(SEED * 1_000_003 + position)
    x = torch.randn(128, 16, generator=generator)
    y = torch.sin(x).sum(dim=1, keepdim=True)
    return x.to(DEVICE), (y * scale if position == bad else y).to(DEVICE)


def past_skipped(position: int, skipped: list[tuple[int, int]]) -> int:
    """The first position at or after ``position`` that no skipped window holds."""
    moved = True
    while moved:
        moved = False
        for first, last in skipped:
            if first <= position <= last:
                position, moved = last + 1, True
    return position


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--bad-batch", type=int, default=BAD_BATCH, help="its position in the data (-1: none)")
    parser.add_argument("--bad-scale", type=float, default=BAD_SCALE, help="its targets, times this")
    parser.add_argument("--remedy", choices=[r.value for r in Remedy], default=Remedy.ROLLBACK.value)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in ("metrics.jsonl", "decisions.jsonl"):
        (args.out / name).unlink(missing_ok=True)

    torch.manual_seed(SEED)
    model = torch.nn.Sequential(torch.nn.Linear(16, 128), torch.nn.ReLU(), torch.nn.Linear(128, 128),
                                torch.nn.ReLU(), torch.nn.Linear(128, 1)).to(DEVICE)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    manager = CheckpointManager(args.out / "checkpoints", keep=6)
    guard = LossSpikeGuard(SpikeConfig(remedy=Remedy(args.remedy)), log_path=args.out / "decisions.jsonl")
    metrics = open(args.out / "metrics.jsonl", "w", encoding="utf-8")

    step, position = 0, 0  # the training step, and the next batch's position in the data
    skipped: list[tuple[int, int]] = []
    lr_scale, lr_until = 1.0, -1  # a lowered learning rate, until that step
    while step < args.steps:
        if step % SAVE_EVERY == 0:  # the data position too: a rollback must know where the data was
            manager.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                          "position": position}, step)
        position = past_skipped(position, skipped)
        x, y = batch(position, args.bad_batch, args.bad_scale)
        for group in optimizer.param_groups:
            group["lr"] = LR * min(1.0, step / WARMUP) * (lr_scale if step < lr_until else 1.0)
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        decision = guard.check(step, loss, grad_norm(model.parameters()), batch=position)
        record = {"step": step, "batch": position, "loss": decision.loss, "grad_norm": decision.grad_norm,
                  "decision": decision.event}
        metrics.write(json.dumps(record) + "\n")
        if decision.message:
            print(decision.message, flush=True)
        if decision.verdict is Verdict.HALT:  # a person is needed: no final save
            metrics.close()
            guard.close()
            return 3
        if decision.verdict is Verdict.ROLLBACK:
            state, step = manager.load_latest(at_most=decision.rollback_to)  # type: ignore[misc]
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            position = state["position"]
            assert decision.skip is not None
            skipped.append(decision.skip)
            print(f"back at the checkpoint of step {step}; batches {decision.skip[0]}-{decision.skip[1]} will be "
                  f"skipped", flush=True)
        if decision.lr_factor is not None and decision.lr_steps is not None:
            lr_scale, lr_until = decision.lr_factor, step + decision.lr_steps
        if decision.verdict is Verdict.ROLLBACK:
            continue
        optimizer.step()
        step, position = step + 1, position + 1
    metrics.close()
    guard.close()
    manager.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                  "position": position}, step)
    print(f"finished at step {step}; {guard.spikes} spikes seen, {len(skipped)} rolled back "
          f"(batches skipped: {', '.join(f'{a}-{b}' for a, b in skipped) or 'none'})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
