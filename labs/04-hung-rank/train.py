"""Lab 4: the hung rank. Four ranks train a tiny model with gloo on the CPU; one chosen rank
stalls at a chosen step, so the other three wait for it inside the gradient all-reduce, as
they would on a GPU node where one rank is stuck in a dataloader, a bad GPU or a filesystem.

Run (from the repository root, with the project's environment: . .venv/bin/activate):

    HANG_RANK=2 HANG_STEP=20 torchrun --standalone --nproc_per_node=4 labs/04-hung-rank/train.py &
    tooling stacks --pid $(pgrep -f 'torch.distributed.run|torchrun' | head -1)

`tooling stacks` runs py-spy dump on every rank, groups identical stacks and names the rank
whose stack is not the majority's. Without it: `py-spy dump --pid PID` for each PID from
`pgrep -P <torchrun pid>` and compare by eye. The hang ends when the collective timeout
(HANG_TIMEOUT seconds, 60 by default; gloo's own default is 30 minutes) fires.

With --watchdog each rank beats a heartbeat every step, and the hang watchdog does the above by
itself, then ends the job with exit 75:

    HANG_TIMEOUT=600 tooling watchdog --run demo-7b --timeout 20 -- \
        torchrun --standalone --nproc_per_node=4 labs/04-hung-rank/train.py --watchdog

Self-check: python labs/04-hung-rank/check.py (and --watchdog for the watchdog's variant)
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist

from tooling.resilience.ranks import any_rank, shutdown
from tooling.resilience.watchdog import Watchdog

HANG_RANK = int(os.environ.get("HANG_RANK", "2"))
HANG_STEP = int(os.environ.get("HANG_STEP", "20"))
HANG_TIMEOUT = float(os.environ.get("HANG_TIMEOUT", "60"))
PROGRESS = os.environ.get("HANG_PROGRESS")  # a folder where each rank notes its last step
STEPS = int(os.environ.get("HANG_STEPS", "10000"))  # HANG_RANK=-1 with few steps: a healthy run


def stall_in_data_loading(seconds: float) -> None:
    """Stands for the real causes: an NFS read that never returns, a GPU that stopped answering."""
    time.sleep(seconds)


def all_reduce_gradients(model: torch.nn.Module, world: int) -> None:
    for p in model.parameters():
        dist.all_reduce(p.grad)  # every rank must arrive here; if one does not, the rest wait
        p.grad /= world


def train_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, step: int, rank: int, world: int) -> None:
    if rank == HANG_RANK and step == HANG_STEP:
        stall_in_data_loading(3600)
    x = torch.randn(32, 16)
    loss = model(x).pow(2).mean()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    all_reduce_gradients(model, world)
    optimizer.step()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Lab 4: four ranks, one of which hangs")
    parser.add_argument("--watchdog", action="store_true", help="beat the hang watchdog (run under tooling watchdog)")
    args = parser.parse_args(argv)
    # before init_process_group: a rank stuck in the rendezvous is seen too
    with Watchdog.from_env(required=True) if args.watchdog else Watchdog(None) as watchdog:
        dist.init_process_group("gloo", timeout=timedelta(seconds=HANG_TIMEOUT))
        rank, world = dist.get_rank(), dist.get_world_size()
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(STEPS):
            watchdog.beat(step)
            if PROGRESS:
                Path(PROGRESS, f"rank{rank}").write_text(str(step))
            train_step(model, optimizer, step, rank, world)
        # A gradient is always held by its parameter too, so shutdown() cannot watch it; it watches
        # the buffer of one last vote instead, which gloo runs after every all-reduce before it.
        any_rank(False)
        shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
