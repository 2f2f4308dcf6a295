"""Lab 5, distributed part: the same promise when no rank holds the whole state. Four ranks train an
FSDP2-sharded model on the CPU (gloo) and save every step with DistributedCheckpointManager: every
rank writes its own shards through torch.distributed.checkpoint (DCP), and a step exists only once
every rank's files are durable and rank 0 has written the manifest that names them.

Run (from the repository root, with the project's environment: . .venv/bin/activate):

    torchrun --standalone --nproc_per_node=4 labs/05-atomic-checkpoints/train_distributed.py --out /tmp/lab5d

Each rank prints its PID. Kill one with `kill -9 PID` while it runs (torchrun then stops the
others) and run the same command again: every rank resumes from the newest step whose shards all
verify, with its own random generator states and data position. Flip a byte in one file of the
newest step folder (/tmp/lab5d/checkpoints/step-*/__2_0.distcp) and run it again: all four ranks
fall back to the previous step together. Run it with --nproc_per_node=2 --reshard: the step saved
by four ranks loads into two (DCP reshards the model and optimizer; the per-rank data positions
cannot be, so --reshard says the ranks start theirs afresh). --async-save saves in the background.
Self-check: python labs/05-atomic-checkpoints/check.py (its distributed part runs this file).
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

from tooling.resilience.determinism import rng_states, set_rng_states
from tooling.resilience.distributed_checkpoint import DistributedCheckpointManager, ModelAndOptimizer
from tooling.resilience.ranks import exit_rank

STEPS = 100_000
WIDTH = 512  # about 9 MB of weights and AdamW state over the job: a save takes long enough to be hit
SEED = 0


def build() -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    """The same model on every rank, then sharded: each rank keeps a quarter of every layer."""
    torch.manual_seed(SEED)
    model = torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH), torch.nn.GELU(), torch.nn.Dropout(0.1),
                                torch.nn.Linear(WIDTH, WIDTH), torch.nn.GELU(), torch.nn.Linear(WIDTH, 1))
    for layer in (model[0], model[3], model[5]):
        fully_shard(layer)
    fully_shard(model)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-4)


def note(out: Path, line: str) -> None:
    """One line of the run's log, in one write: ranks append side by side without tearing lines."""
    fd = os.open(out / "ranks.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def train(out: Path, steps: int, *, async_save: bool, reshard: bool) -> int:
    rank, world = dist.get_rank(), dist.get_world_size()
    model, optimizer = build()
    state = {"app": ModelAndOptimizer(model, optimizer)}  # DCP saves each rank's shards of both
    manager = DistributedCheckpointManager(out / "checkpoints", keep=3, async_save=async_save)
    step, position = 0, rank  # position: this rank's place in the data, every world-th batch
    torch.manual_seed(SEED + rank)  # dropout differs per rank: its RNG state is the rank's own
    resumed = manager.load_latest(state, reshard=reshard)  # every rank, the same step
    if resumed is not None:
        step = resumed.step
        if resumed.rank_state is not None:  # None when resharded: this rank starts its data afresh
            position = resumed.rank_state["position"]
            set_rng_states(resumed.rank_state["rng"])
    note(out, f"rank {rank} pid {os.getpid()} resumed {step} of {world}")
    print(f"rank {rank} of {world}: PID {os.getpid()}, resuming from step {step}", flush=True)
    while step < steps:
        x = torch.randn(64, WIDTH, generator=torch.Generator().manual_seed(position))
        loss = model(x).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # FSDP2 reduce-scatters the gradients: every rank takes part
        optimizer.step()
        step, position = step + 1, position + world
        note(out, f"rank {rank} saving {step}")
        manager.save(state, step, rank_state={"rng": rng_states(), "position": position})
    manager.close()  # an async save finishes before the process group goes
    return step


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--async-save", action="store_true", help="block only for the staging copy")
    parser.add_argument("--reshard", action="store_true", help="resume with another number of ranks")
    args = parser.parse_args()
    torch.set_num_threads(1)  # four ranks on a few cores
    dist.init_process_group("gloo")  # torchrun sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT
    args.out.mkdir(parents=True, exist_ok=True)
    step = train(args.out, args.steps, async_save=args.async_save, reshard=args.reshard)
    if dist.get_rank() == 0:
        print(f"trained to step {step}", flush=True)
    return 0


if __name__ == "__main__":
    # Not sys.exit: torch keeps this job's process group (and gloo's threads) alive past
    # destroy_process_group(), so the interpreter's teardown can abort a rank that finished
    # cleanly. exit_rank destroys the group and exits without it (tooling/resilience/ranks.py).
    exit_rank(main())
