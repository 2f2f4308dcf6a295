"""Lab 5: atomic checkpoints. A trainer that saves every step, so that a SIGKILL (or a node
reboot) very likely lands in the middle of a save.

Run (from the repository root, with the project's environment: . .venv/bin/activate):

    python labs/05-atomic-checkpoints/train.py --out /tmp/lab5 --writer manager   # tmp, fsync, rename, manifest
    python labs/05-atomic-checkpoints/train.py --out /tmp/lab5n --writer naive    # torch.save onto the final name

Kill either one with `kill -9` while it runs, then start it again: the manager resumes from the
newest checkpoint that verifies; the naive writer may find a truncated file it cannot load.
Self-check with 100 random SIGKILLs: python labs/05-atomic-checkpoints/check.py
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import torch

from tooling.resilience.checkpoint import CheckpointManager

STEPS = 100_000
WIDTH = 512  # about 12 MB of weights and Adam state: a save takes long enough to be hit
SEED = 0
NAIVE_FILE = "checkpoint.pt"


def build() -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(SEED)
    model = torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH), torch.nn.GELU(), torch.nn.Linear(WIDTH, WIDTH),
                                torch.nn.GELU(), torch.nn.Linear(WIDTH, 1))
    return model, torch.optim.AdamW(model.parameters(), lr=1e-4)


def note(out: Path, line: str) -> None:
    with open(out / "resumes.log", "a") as handle:
        handle.write(line + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def train(out: Path, writer: str, steps: int = STEPS) -> int:
    model, optimizer = build()
    step = 0
    if writer == "manager":
        manager = CheckpointManager(out / "checkpoints", keep=3)
        manager.cleanup()  # the folder's writer lock now, and the temporary files of killed saves removed
        restored = manager.load_latest()
        if restored is not None:
            state, step = restored
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
    elif (out / NAIVE_FILE).exists():
        state = torch.load(out / NAIVE_FILE, weights_only=False)  # fails on a truncated file
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        step = state["step"]
    note(out, f"resume {step}")
    data = torch.Generator().manual_seed(SEED + step)
    while step < steps:
        x = torch.randn(64, WIDTH, generator=data)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        step += 1
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}
        if writer == "manager":
            manager.save(state, step)
        else:
            torch.save(state, out / NAIVE_FILE)  # the naive way: the final name is written in place
    return step


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--writer", choices=["manager", "naive"], default="manager")
    parser.add_argument("--steps", type=int, default=STEPS)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"trained to step {train(args.out, args.writer, args.steps)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
