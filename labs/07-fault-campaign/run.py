"""One rank of lab 7's training (train.py): lab 6's model, data and sharded checkpoints, with every
automation that runs inside a training loop, each handling said in OUT/train.log (rank 0) with the
automation's ``[handled_by: ID]``, and the timeline goodput is measured on in OUT/steps.log."""
from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp

from tooling.resilience.determinism import rng_states, set_rng_states
from tooling.resilience.distributed_checkpoint import DistributedCheckpointManager, ModelAndOptimizer, StorageFull
from tooling.resilience.loss_spike import LossSpikeGuard, SpikeConfig, Verdict as Spike
from tooling.resilience.nan_guard import NaNGuard, Verdict
from tooling.resilience.reporter import RunReporter

from faults import Injected  # this folder's

HERE = Path(__file__).resolve().parent


def lab6_trainer():  # type: ignore[no-untyped-def]
    """Lab 6's train.py as a module: its model, its one-write log lines, its resume event."""
    folder = HERE.parent / "06-spare-nodes"
    sys.path.append(str(folder))  # its own imports
    spec = importlib.util.spec_from_file_location("lab6_train", folder / "train.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lab6 = lab6_trainer()


class Run:
    """One rank's training: lab 6's model and data, this lab's automations."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args, self.on = args, args.automations == "on"
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.node = os.environ.get("SLURMD_NODENAME", f"local{self.rank}")
        self.restart = os.environ.get("SLURM_RESTART_COUNT", "0")
        self.model, self.optimizer = lab6.build()
        self.state = {"app": ModelAndOptimizer(self.model, self.optimizer), "batches": 0}
        self.manager = DistributedCheckpointManager(args.out / "fs" / "checkpoints", keep=args.keep)
        self.skipped: list[tuple[int, int]] = []  # data windows never read again
        self.step = self.saved = 0
        logs = args.kernel_logs / self.node / "dmesg" if args.kernel_logs else None
        self.faults = Injected(args.out / "inject", self.rank, self.world, logs)
        self.log = logging.getLogger("lab7")  # OUT/train.log on rank 0: what tooling watch reads
        self.nan_guard = NaNGuard(policy="skip")
        # 64 samples a rank: a loss noisier than a large run's, whose outliers reach 7 deviations now
        # and then; twice the default threshold still sees a bad shard (thousands of deviations)
        self.spike_guard = LossSpikeGuard(SpikeConfig(threshold=12.0, grad_threshold=20.0),
                                          log_path=args.out / "spike-guard.jsonl" if self.rank == 0 else None)

    def note(self, line: str) -> None:
        if self.rank == 0:
            lab6.note(self.args.out / "steps.log", f"restart {self.restart} {line}")

    def said(self, line: str | None) -> None:
        if line and self.rank == 0:
            self.log.warning("%s", line)

    def resume(self) -> None:
        """The newest checkpoint (at most the person's, where one asked) that verifies; with the
        automations off, the newest one as it is."""
        person, once = self.args.out / "person.json", self.args.out / "person-resume.json"
        asked = json.loads(person.read_text()) if person.exists() else {}
        self.skipped = [tuple(window) for window in asked.get("skip", [])]  # type: ignore[misc]
        at_most = json.loads(once.read_text())["resume_at_most"] if once.exists() else None
        steps = [e.step for e in self.manager.entries if at_most is None or e.step <= at_most]
        newest = max(steps, default=0)
        if not self.on:
            self.step = _load_unverified(self.manager, self.state, newest) if steps else 0
        elif (resumed := self.manager.load_latest(self.state, reshard=True, at_most=at_most)) is not None:
            self.step = resumed.step
            if resumed.rank_state is not None:
                set_rng_states(resumed.rank_state["rng"])
                self.skipped = sorted(set(self.skipped) | {tuple(w) for w in resumed.rank_state["skipped"]})
            if resumed.step < newest:
                torn = ", ".join(str(s) for s in steps if s > resumed.step)
                self.said(f"checkpoint of step {torn} is corrupt (its files fail their size or CRC-32 check): "
                          f"resumed from step {resumed.step}, the newest that verifies [handled_by: atomic-checkpoints]")
        self.saved = self.step  # what it resumed from is saved already
        self.note(f"resumed {self.step} newest {newest} batch {self.state['batches']} at {time.time():.3f}")

    def position(self) -> int:
        """The data position of the next step, past every skipped window."""
        position, moved = int(self.state["batches"]), True
        while moved:
            moved = False
            for first, last in self.skipped:
                if first <= position <= last:
                    position, moved = last + self.world, True
        return position

    def numbers(self, loss: torch.Tensor) -> tuple[torch.Tensor, float]:
        """The whole job's mean loss and gradient norm (each rank holds a shard of every gradient):
        one all-reduce of two numbers, so every rank's guards decide alike."""
        squares = sum((p.grad.to_local().float() ** 2).sum() for p in self.model.parameters() if p.grad is not None)
        both = torch.stack([loss.detach().float(), torch.as_tensor(squares, dtype=torch.float32)])
        dist.all_reduce(both)
        return both[0] / self.world, float(both[1].sqrt())

    def train_step(self, reporter: RunReporter | None) -> None:
        started, position = time.time(), self.position()
        self.faults.stall_if_stopped(position)
        x, y = self.faults.batch(position, lab6.SEED)
        loss = (self.model(x) - y).pow(2).mean()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        mean, norm = self.numbers(loss)
        if self.on and self.guarded(mean, norm, position, started):
            return
        self.optimizer.step()
        time.sleep(self.args.step_seconds)  # the node's compute beyond the tiny model, as lab 6's work()
        self.step, self.state["batches"] = self.step + 1, position + self.world
        self.note(f"step {self.step} batch {position} {started:.3f} {time.time():.3f}")
        if reporter is not None:
            reporter.step(self.step, loss=mean, tokens=self.step * 64 * self.world)

    def guarded(self, loss: torch.Tensor, norm: float, position: int, started: float) -> bool:
        """The guards' verdicts on the step; True when it must not reach the optimizer."""
        verdict = self.nan_guard.check(self.step, loss, grad_norm=norm)
        if verdict is not Verdict.STEP:
            self.said(self.nan_guard.message(verdict))
            self.skipped.append((position, position))
            self.state["batches"] = position + self.world
            self.note(f"skipped batch {position} {started:.3f} {time.time():.3f}")
            return True
        decision = self.spike_guard.check(self.step, loss, norm, batch=position)
        self.said(decision.message)
        if decision.verdict is not Spike.ROLLBACK:
            return False
        assert decision.skip is not None
        resumed = self.manager.load_latest(self.state, reshard=True, at_most=decision.rollback_to)
        assert resumed is not None, "no checkpoint from before the spike verifies"
        self.step = self.saved = resumed.step
        self.skipped.append(decision.skip)
        self.note(f"rollback {self.step} batch {position} {started:.3f} {time.time():.3f}")
        return True

    def save(self) -> None:
        started, self.saved = time.time(), self.step
        try:
            self.manager.save(self.state, self.step, rank_state={"rng": rng_states(), "skipped": self.skipped})
        except StorageFull as refused:
            if not self.on:
                raise
            self.said(f"{refused}; training goes on from the last checkpoint [handled_by: storage-capacity-guard]")
            self.note(f"refused {self.step} {started:.3f} {time.time():.3f}")
            return
        self.note(f"saved {self.step} {started:.3f} {time.time():.3f}")

    def requeue(self) -> None:
        """Saved on the preemption warning: back to the queue, to resume from this step."""
        job = os.environ.get("SLURM_JOB_ID")
        self.said(f"job {job} preempted (SIGUSR1): saved step {self.step}, requeued to resume from it "
                  "[handled_by: preemption-auto-resume]")
        if job:
            subprocess.run(["scontrol", "requeue", job], check=False)


def _load_unverified(manager: DistributedCheckpointManager, state: dict, step: int) -> int:  # type: ignore[type-arg]
    """The automations-off resume: DCP's own load of the newest step, no size or CRC-32 check."""
    folder = next(e.folder for e in manager.entries if e.step == step)
    dcp.load(state, checkpoint_id=str(manager.directory / folder))
    return step
