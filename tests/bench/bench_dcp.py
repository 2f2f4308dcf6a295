"""Benchmark of DistributedCheckpointManager against plain torch.distributed.checkpoint (DCP), measured
in the same run, on the same FSDP2-sharded model and AdamW state, by the same ranks.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_dcp.py [--tiny])
- a synchronous save (DCP's write, fsync of every file and folder, CRC-32 of every shard, the
  gather, rename and manifest) vs ``dcp.save`` of the same state with its default writer (which
  fsyncs the files, not the folders); target at most 1.2x;
- the time the training loop is blocked by an async save (the staging copy) vs the synchronous
  save; target at most 0.2x.
A save's time is the slowest rank's, from a barrier to its return: when the job can go on. Each
round saves a new step and rotates out the one from two saves ago, as a run does (the plain DCP
side deletes its old folder untimed). Figures are ratios against the baseline of the same run
(the median of each round's own ratio), printed, never asserted. --tiny (a few KB, 2 rounds) runs in seconds, for a smoke test.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.fsdp import fully_shard

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the ranks' launcher
import dcp_ranks  # noqa: E402

from tooling.resilience.distributed_checkpoint import DistributedCheckpointManager, ModelAndOptimizer  # noqa: E402

WORLD = 4


def model_and_optimizer(width: int, layers: int) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    """An FSDP2-sharded stack of linear layers, one step trained so that AdamW has its state."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(width, width) for _ in range(layers)])
    for layer in model:
        fully_shard(layer)
    fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model(torch.randn(4, width)).pow(2).mean().backward()
    optimizer.step()
    return model, optimizer


def job_seconds(action: Callable[[], object]) -> float:
    """The slowest rank's time for ``action``, from a barrier: when the whole job can go on."""
    dist.barrier()
    start = time.perf_counter()
    action()
    took = torch.tensor([time.perf_counter() - start], dtype=torch.float64)
    dist.all_reduce(took, op=dist.ReduceOp.MAX)
    return float(took.item())


def bench(rank: int, world: int, *, root: str, tiny: bool) -> None:
    width, layers, rounds = (64, 2, 2) if tiny else (1024, 8, 15)
    model, optimizer = model_and_optimizer(width, layers)
    state = {"app": ModelAndOptimizer(model, optimizer)}
    folder = Path(root)
    sync = DistributedCheckpointManager(folder / "sync", keep=2)
    background = DistributedCheckpointManager(folder / "async", keep=2, async_save=True)

    def plain(step: int) -> float:
        took = job_seconds(lambda: dcp.save(state, checkpoint_id=folder / "plain" / f"step-{step}"))
        if rank == 0:  # keep 2, untimed, as the manager's rotation runs after its save returns
            shutil.rmtree(folder / "plain" / f"step-{step - 2}", ignore_errors=True)
        return took

    def managed(manager: DistributedCheckpointManager, step: int) -> float:
        took = job_seconds(lambda: manager.save(state, step))
        manager.wait()  # the async write and commit, and the rotation: untimed
        return took

    measures: dict[str, Callable[[int], float]] = {
        "plain": plain, "managed": lambda step: managed(sync, step), "blocked": lambda step: managed(background, step)}
    times: dict[str, list[float]] = {name: [] for name in measures}
    for step in range(-1, rounds):  # step -1: a warm-up round, not counted
        order = list(measures)  # interleaved, each first in turn: the disk's moods hit all alike
        for name in order[step % 3:] + order[:step % 3]:
            took = measures[name](step + 1)
            if step >= 0:
                times[name].append(took)
    sync.close()
    background.close()
    if rank == 0:
        report(times, sum(p.numel() * p.element_size() for p in model.parameters()) * 3, rounds)


def report(times: dict[str, list[float]], size: int, rounds: int) -> None:
    """Medians of each kind, and the ratios as medians of the rounds' own ratios: a round is one
    moment of the disk for all three, so a slow moment does not tilt the comparison."""
    plain, synchronous, blocked = (statistics.median(times[name]) for name in ("plain", "managed", "blocked"))
    sync_ratio = statistics.median(m / p for m, p in zip(times["managed"], times["plain"]))
    async_ratio = statistics.median(b / m for b, m in zip(times["blocked"], times["managed"]))
    print(f"sharded checkpoint of about {size / 2**20:.3g} MiB (FSDP2 model and AdamW state) over {WORLD} ranks, "
          f"median of {rounds} rounds (ratios: median of each round's own)", flush=True)
    print(f"  dcp.save, its default writer (baseline)   : {plain * 1000:7.1f} ms", flush=True)
    print(f"  DistributedCheckpointManager.save (sync)  : {synchronous * 1000:7.1f} ms  -> "
          f"{sync_ratio:5.2f}x baseline (target <= 1.2x)", flush=True)
    print(f"  loop blocked by an async save (staging)   : {blocked * 1000:7.1f} ms  -> "
          f"{async_ratio:5.2f}x synchronous (target <= 0.2x)", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a few KB of state, 2 rounds: a smoke test in seconds")
    args = parser.parse_args()
    torch.set_num_threads(1)  # one thread per rank, no OpenMP pool in the parent: forking stays safe
    dcp_ranks.PROGRAMS["bench"] = bench
    with tempfile.TemporaryDirectory() as tmp:
        pids = dcp_ranks.fork_ranks("bench", WORLD, os.path.join(tmp, "store"), {"root": tmp, "tiny": args.tiny})
        statuses = [os.waitpid(pid, 0)[1] for pid in pids]
    if any(statuses):
        print(f"a rank failed: wait statuses {statuses}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
