"""Lab 1: a training that survives SLURM. It resumes from its last checkpoint whatever ended the
previous attempt (a time limit, scancel, a SIGKILL, a preemption), and when SLURM warns it with
SIGUSR1 before the time limit it saves at the next step boundary and exits cleanly.

Run it through job.sbatch (see README.md); directly, for a look:

    python labs/01-slurm-auto-resume/train.py --out /tmp/lab1
    kill -USR1 <pid>          # what SLURM sends before the time limit: save, then exit

Under torchrun every rank takes part in the stop decision, so all ranks stop at the same step;
only rank 0 writes the log and, with --requeue, asks SLURM to requeue the job.
With --run RUN (and --records, the playbook repository) rank 0 also keeps the run record up to
date through tooling.resilience.RunReporter: step, loss, tokens/s and the last verified checkpoint.
Self-check (needs SLURM: scripts/slurm-local start): python labs/01-slurm-auto-resume/check.py
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

stop_requested = False


def on_usr1(signum: int, frame: object) -> None:
    global stop_requested
    stop_requested = True  # only a flag: saving inside a signal handler could interrupt a half-done step


# Installed before torch is imported, which takes seconds on a busy node: a USR1 arriving during
# the import would otherwise end the process (the default action) instead of asking it to save.
signal.signal(signal.SIGUSR1, on_usr1)

import torch  # noqa: E402  (after the handler, on purpose)
import torch.distributed as dist  # noqa: E402

from tooling.resilience.checkpoint import CheckpointManager  # noqa: E402
from tooling.resilience.ranks import any_rank, shutdown  # noqa: E402
from tooling.resilience.reporter import RunReporter  # noqa: E402

TOTAL_STEPS = 400
CKPT_EVERY = 20  # steps; at most this many are trained twice after a hard kill
STEP_SECONDS = 0.02
SEED = 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--total-steps", type=int, default=TOTAL_STEPS)
    parser.add_argument("--ckpt-every", type=int, default=CKPT_EVERY)
    parser.add_argument("--step-seconds", type=float, default=STEP_SECONDS)
    parser.add_argument("--requeue", action="store_true", help="on USR1, rank 0 requeues this SLURM job")
    parser.add_argument("--run", help="run id: report progress into runbooks/runs/<RUN>.yaml")
    parser.add_argument("--records", type=Path, help="the repository holding that run record (default: found upward)")
    parser.add_argument("--report-every", type=float, default=60.0, help="seconds between reports (default: 60)")
    args = parser.parse_args()
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return train(args, rank=0)
    dist.init_process_group("gloo")
    status = train(args, rank=dist.get_rank())
    shutdown()  # destroy_process_group() once gloo has let go; see tooling/resilience/ranks.py
    return status


def train(args: argparse.Namespace, *, rank: int) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(SEED)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    manager = CheckpointManager(args.out / "checkpoints", keep=3)
    reporter = RunReporter(args.run, root=args.records, every=args.report_every, sample_every=args.report_every,
                           checkpoints=manager, total_steps=args.total_steps) if args.run else None
    try:
        return loop(args, rank=rank, model=model, optimizer=optimizer, manager=manager, reporter=reporter)
    finally:
        if reporter is not None:
            reporter.close()  # the last step and checkpoint, written before the process goes


def loop(args: argparse.Namespace, *, rank: int, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
         manager: CheckpointManager, reporter: RunReporter | None) -> int:
    task = os.environ.get("SLURM_ARRAY_TASK_ID", "-")
    restart = os.environ.get("SLURM_RESTART_COUNT", "0")  # unset on a first run, 1 after a requeue
    step = 0
    restored = manager.load_latest()
    if restored is not None:
        state, step = restored
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
    print(f"task {task} restart {restart}: resumed from step {step}", flush=True)
    if step >= args.total_steps:
        print("run already finished: nothing to do", flush=True)
        return 0
    data = torch.Generator().manual_seed(SEED + step)  # the batches after step N are the same on every resume
    log = open(args.out / "steps.log", "a") if rank == 0 else None

    def save() -> None:
        if rank == 0:
            manager.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, step)

    while step < args.total_steps:
        x = torch.randn(64, 32, generator=data)
        loss = (model(x) - x[:, :1].sin()).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        step += 1
        if reporter is not None:
            reporter.step(step, loss=loss, tokens=step * x.shape[0])  # stores the values; no I/O here
        time.sleep(args.step_seconds)
        if log is not None:
            log.write(f"task={task} restart={restart} step={step}\n")
            log.flush()
        if step % args.ckpt_every == 0:
            save()
        if any_rank(stop_requested):  # every rank stops at the same step
            # the warning is taken: a second one (scancel may deliver its signal twice on a loaded
            # controller) is ignored, as Python's teardown would otherwise end the process with
            # it (it restores the default action) and a task that saved would end FAILED
            signal.signal(signal.SIGUSR1, signal.SIG_IGN)
            save()
            print(f"USR1: saved step {step} before the time limit; exiting", flush=True)
            if reporter is not None:
                reporter.close()  # the saved step in the record before the job goes back to the queue
            if args.requeue and rank == 0 and "SLURM_JOB_ID" in os.environ:
                subprocess.run(["scontrol", "requeue", os.environ["SLURM_JOB_ID"]], check=False)
            return 0
    save()
    print(f"finished at step {step}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
