"""Lab 6: a training across three nodes that survives losing one. One process per node (torchrun
--nproc-per-node=1, static rendezvous), gloo on the CPU, a tiny model sharded by FSDP2, a sharded
checkpoint (DistributedCheckpointManager: every rank writes its own shards, rank 0 commits) every
--ckpt-every steps. Started by job.sbatch (see README.md); when a node's GPU fails, the health
check drains the node, `tooling job` requeues the job, SLURM starts it on the spare, and every
rank resumes here from the newest step whose shards all verify.

Directly, without SLURM, three "nodes" on this machine (from the repository root, with the
project's environment):

    for n in 0 1 2; do torchrun --nnodes=3 --nproc-per-node=1 --node-rank=$n --master-addr=127.0.0.1 \\
        --master-port=29631 labs/06-spare-nodes/train.py --out /tmp/lab6 & done; wait

Rank 0 appends "restart R world W on NODES resumed N torchrun-restarts E at T" to OUT/steps.log at
every start (R: SLURM's requeues; NODES and E by rank: each rank's node, and the failures its
torchrun agent restarted it for), "restart R step N at T" after every step and "restart R saved N
at T" after every commit; every rank appends where it runs to OUT/ranks.log.
The data position is the number of batches the whole job has read, saved in the checkpoint, so a
job that comes back at another size (check.py --elastic: torchrun --nnodes=2:3) reads on from it
while DCP reshards the model and optimizer.

Every rank times its own work of a step (StragglerDetector): a rank slower than the others for
three reports of ten steps is named with its node in one line of the job's log, which `tooling
watch` files as a throughput drop. SLOW_NODE=n2 (SLOW_FACTOR, SLOW_FROM) slows one node on
purpose (check.py --straggler; stragglers.py is the detector's smaller trainer). With --run-id RUN (and
--records, the playbook repository) rank 0 keeps the run record up to date (RunReporter: step,
loss, the last verified checkpoint) and records its resume there as a `resume` event naming the
checkpoint's step and the nodes. `touch OUT/STOP` ends the run cleanly after a save (lab 2's
switch). Self-check: python labs/06-spare-nodes/check.py
"""
from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

from tooling.resilience.determinism import rng_states, set_rng_states
from tooling.resilience.distributed_checkpoint import DistributedCheckpointManager, ModelAndOptimizer
from tooling.resilience.ranks import any_rank, exit_rank
from tooling.resilience.reporter import RunReporter
from tooling.resilience.stragglers import StragglerDetector
from tooling.resilience.switch import Action, KillSwitch

from stragglers import work_seconds  # this folder's: the node SLOW_NODE names works slower

SEED = 0
WIDTH = 64


def build() -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    """The same model on every rank, then sharded: each rank keeps a third of every parameter."""
    torch.manual_seed(SEED)
    model = torch.nn.Sequential(torch.nn.Linear(32, WIDTH), torch.nn.Tanh(), torch.nn.Linear(WIDTH, 1))
    fully_shard(model)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-3)


def note(path: Path, line: str) -> None:
    """One line in one write: ranks append side by side without tearing lines."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def work(args: argparse.Namespace, node: str, step: int) -> None:
    """This node's share of a step's compute beyond the tiny model: a sleep, so that three ranks
    sharing a few cores run as if each had a node of its own; longer on a node slowed on purpose."""
    time.sleep(work_seconds(node, args.step_seconds, step))


def report_resume(args: argparse.Namespace, step: int, nodes: list[str]) -> subprocess.Popen[bytes] | None:
    """The run record's ``resume`` event, written by `tooling report` beside the training."""
    if not args.run:
        return None
    detail = (f"from the newest checkpoint that verifies (step {step}), {len(nodes)} ranks on {', '.join(nodes)}")
    command = [sys.executable, "-m", "tooling", *(["--root", str(args.records)] if args.records else []), "report",
               args.run, "--event", "resume", "--step", str(step), "--host", nodes[0], "--detail", detail]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL)


def train(args: argparse.Namespace) -> int:
    rank, world = dist.get_rank(), dist.get_world_size()
    node = os.environ.get("SLURMD_NODENAME", f"local{os.environ.get('GROUP_RANK', rank)}")
    restart = os.environ.get("SLURM_RESTART_COUNT", "0")
    model, optimizer = build()
    # batches: how many the whole job has read; this rank reads batch batches + rank of each step
    state = {"app": ModelAndOptimizer(model, optimizer), "batches": 0}
    manager = DistributedCheckpointManager(args.out / "checkpoints", keep=3)
    step = 0
    torch.manual_seed(SEED + rank)
    # every rank, the same step: the newest whose shards all verify, resharded when the job's size
    # changed (then without the ranks' own RNG states, which do not reshard)
    resumed = manager.load_latest(state, reshard=True)
    if resumed is not None:
        step = resumed.step
        if resumed.rank_state is not None:
            set_rng_states(resumed.rank_state["rng"])
    # every rank's node, and how many failures its torchrun agent restarted it for (0 without torchrun)
    everyone: list[tuple[str, str]] = [("", "")] * world
    dist.all_gather_object(everyone, (node, os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")))
    nodes = [where for where, _ in everyone]
    note(args.out / "ranks.log", f"restart {restart} rank {rank} node {node} world {world} resumed {step}")
    if rank == 0:
        note(args.out / "steps.log", f"restart {restart} world {world} on {','.join(nodes)} resumed {step} "
                                     f"torchrun-restarts {','.join(count for _, count in everyone)} "
                                     f"at {time.time():.3f}")
    writer = report_resume(args, step, nodes) if rank == 0 and resumed is not None else None
    reporter = RunReporter(args.run, root=args.records, every=1.0, sample_every=1.0, checkpoints=manager,
                           total_steps=args.steps) if args.run else None
    if rank == 0:
        print(f"restart {restart}: {world} ranks on {', '.join(nodes)}, resumed from step {step}", flush=True)
    switch = KillSwitch(args.out)
    detector = StragglerDetector(node=node)  # one all_gather of one float every 10 steps
    while step < args.steps:
        x = torch.randn(64, 32, generator=torch.Generator().manual_seed(state["batches"] + rank))
        loss = (model(x) - x[:, :1].sin()).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # FSDP2 reduce-scatters the gradients: every rank takes part
        optimizer.step()
        with detector.timed():  # this rank's own work: the collectives above wait for the slowest rank
            work(args, node, step)
        step, state["batches"] = step + 1, state["batches"] + world
        if reporter is not None:
            reporter.step(step, loss=loss, tokens=step * 64 * world)
        if rank == 0:
            note(args.out / "steps.log", f"restart {restart} step {step} at {time.time():.3f}")
        stop = any_rank(switch.check() is Action.STOP)
        if step % args.ckpt_every == 0 or stop or step == args.steps:
            manager.save(state, step, rank_state={"rng": rng_states()})
            if rank == 0:
                note(args.out / "steps.log", f"restart {restart} saved {step} at {time.time():.3f}")
        if stop:
            break
    manager.close()
    if reporter is not None:
        reporter.close()
    if writer is not None:
        writer.wait(60)
    if rank == 0:
        print(f"restart {restart}: stopped at step {step}", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="checkpoints and logs, on storage every node sees")
    parser.add_argument("--steps", type=int, default=1_000_000, help="steps of the whole run")
    parser.add_argument("--ckpt-every", type=int, default=20, help="steps between sharded checkpoints")
    parser.add_argument("--step-seconds", type=float, default=0.05, help="each node's work per step, besides the model")
    # not --run: torchrun's parser reads it as an abbreviation of its own --run-path, even after the script
    parser.add_argument("--run-id", dest="run", metavar="RUN", help="run id: report into runbooks/runs/<RUN>.yaml")
    parser.add_argument("--records", type=Path, help="the repository holding that run record")
    args = parser.parse_args()
    # a training log's usual lines, whose time `tooling watch` reads (the detector's line among them)
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%Y-%m-%dT%H:%M:%S%z")
    torch.set_num_threads(1)  # three ranks on a few cores
    # a peer that died is noticed within a minute, not gloo's default half hour
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    args.out.mkdir(parents=True, exist_ok=True)
    return train(args)


if __name__ == "__main__":
    exit_rank(main())  # not sys.exit: see tooling/resilience/ranks.py (DTensor keeps gloo alive)
