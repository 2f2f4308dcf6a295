"""A slow node among healthy ones: the straggler detector on its own, on lab 4's tiny model,
data-parallel over gloo on the CPU (lab 6's train.py runs the same detector inside the lab's
sharded training: `check.py --straggler`). Each step every rank sleeps STEP_SECONDS (5 ms) in its
own work, standing for its GPU's share of the step: asleep, ranks sharing a few CPU cores run as
if each had a node of its own. The ranks on the node named by SLOW_NODE sleep SLOW_FACTOR times
as long (2) from step SLOW_FROM on (0), as a throttled GPU or a busy host computes slower; the
others wait for them in the gradients' all-reduce, and the detector names the rank and its node
(:mod:`tooling.resilience.stragglers`). Its line goes to the job's log, where `tooling watch`
files it as a throughput drop with the node as evidence.

Across the emulated nodes of scripts/slurm-cluster, one torchrun per node (each task has its
node's SLURMD_NODENAME, the name the detector reports)::

    SLOW_NODE=n2 srun -N3 --ntasks-per-node=1 --output=job.log bash -c 'exec python -m torch.distributed.run \
        --nnodes=3 --nproc-per-node=1 --node-rank=$SLURM_NODEID --master-addr=127.0.0.1 --master-port=29731 \
        labs/06-spare-nodes/stragglers.py --steps 200'
    tooling watch job.log --run demo-7b --once     # the straggler, filed with node n2

Without SLOW_NODE it is a healthy run, which must name no one. Rank 0 prints one JSON line at
the end: {"steps": N, "named": [{"step", "rank", "node", "score"}, ...]}.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time

import torch
import torch.distributed as dist

from tooling.resilience.ranks import any_rank, exit_rank
from tooling.resilience.stragglers import StragglerDetector


def work_seconds(node: str, seconds: float, step: int) -> float:
    """Seconds of the stand-in GPU work of ``step`` on ``node``: ``seconds``, SLOW_FACTOR times as
    long on the node SLOW_NODE names from step SLOW_FROM on (lab 6's train.py asks here too)."""
    slow = os.environ.get("SLOW_NODE")
    if slow and slow == node and step >= int(os.environ.get("SLOW_FROM", "0")):
        return seconds * float(os.environ.get("SLOW_FACTOR", "2"))
    return seconds


def train_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, detector: StragglerDetector,
               work: float) -> None:
    """One data-parallel step; only this rank's own work is timed (the all-reduce waits for the
    slowest rank, so it would make every rank look alike)."""
    with detector.timed():
        time.sleep(work)  # the GPU's share of the step: longer on a slow node
        loss = model(torch.randn(32, 16)).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= dist.get_world_size()
    optimizer.step()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the straggler detector, one node slowed on purpose (SLOW_NODE)")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--every", type=int, default=10, help="steps per report")
    args = parser.parse_args(argv)
    # a training log's usual lines, which tooling watch reads the time of (the detector's line among them)
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%Y-%m-%dT%H:%M:%S%z",
                        stream=sys.stderr)
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    detector = StragglerDetector(every=args.every)
    seconds, named = float(os.environ.get("STEP_SECONDS", "0.005")), []
    for step in range(args.steps):
        before = set(detector.stragglers)
        train_step(model, optimizer, detector, work_seconds(detector.node, seconds, step))
        named += [{"step": step, "rank": s.rank, "node": s.node, "score": round(s.score, 3)}
                  for rank, s in detector.stragglers.items() if rank not in before]
    if dist.get_rank() == 0:
        print(json.dumps({"steps": args.steps, "named": named}), flush=True)
    any_rank(False)  # a last collective whose buffer shutdown() can watch (see lab 4)
    return 0


if __name__ == "__main__":
    # not sys.exit: the gradients' all-reduces are gloo's too, and a worker thread that lets go of one
    # while the interpreter finalises aborts the rank ("terminate called without an active
    # exception", seen once in 500 healthy steps under load); exit_rank shuts down and skips teardown
    exit_rank(main())
