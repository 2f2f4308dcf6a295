"""Lab 2: the kill/save switch. Stop a running training within seconds, with a valid checkpoint.

Run (from the repository root, with the project's environment: . .venv/bin/activate):

    python labs/02-kill-switch/train.py --out /tmp/lab2

In a second shell, while it trains:

    touch /tmp/lab2/SAVE     # saves a checkpoint now and keeps training (SAVE disappears)
    touch /tmp/lab2/STOP     # saves after the current step and exits cleanly

Run the first command again: it resumes from the checkpoint. Remove STOP first, or it exits at
once, which is the point: a job queued behind a STOP never starts training.

Self-check (what the tests run): python labs/02-kill-switch/check.py
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import torch

from tooling.resilience.checkpoint import CheckpointManager
from tooling.resilience.switch import Action, KillSwitch

# defaults: a tiny regression model that trains for as long as you let it
STEPS = 1_000_000
SAVE_EVERY = 200  # steps between routine checkpoints
LR = 1e-3
SEED = 0
STEP_SECONDS = 0.002  # slows the loop down to something you can watch
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for checkpoints and the switch files")
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--save-every", type=int, default=SAVE_EVERY)
    parser.add_argument("--step-seconds", type=float, default=STEP_SECONDS)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    switch = KillSwitch(args.out)
    if switch.check() is Action.STOP:  # checked before the first step, so a queued job stops at once
        print(f"STOP present in {args.out}: not starting", flush=True)
        return 0

    torch.manual_seed(SEED)
    random.seed(SEED)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1)).to(DEVICE)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR)
    data = torch.Generator().manual_seed(SEED)
    target = torch.randn(32, 1, generator=data).to(DEVICE)

    manager = CheckpointManager(args.out / "checkpoints", keep=3)
    step = 0
    restored = manager.load_latest()
    if restored is not None:
        state, step = restored
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["torch_rng"])
        data.set_state(state["data_rng"])
        random.setstate(state["python_rng"])
        print(f"resumed from step {step}", flush=True)

    def save() -> None:
        manager.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                      "config": vars(args) | {"out": str(args.out)}, "torch_rng": torch.get_rng_state(),
                      "data_rng": data.get_state(), "python_rng": random.getstate()}, step)

    while step < args.steps:
        x = torch.randn(256, 32, generator=data).to(DEVICE)
        loss = torch.nn.functional.mse_loss(model(x), torch.tanh(x @ target))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        step += 1
        time.sleep(args.step_seconds)
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.4f}", flush=True)
        action = switch.check()  # two stat() calls per step
        if action is Action.STOP:
            save()
            print(f"STOP: saved step {step} and exiting", flush=True)
            return 0
        if action is Action.SAVE or step % args.save_every == 0:
            save()
            if action is Action.SAVE:
                switch.saved()
                print(f"SAVE: saved step {step}, training on", flush=True)
    save()
    print(f"finished at step {step}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
