"""Lab 7: lab 6's training (the same model sharded by FSDP2, its data, its sharded checkpoints) with
every automation of the catalogue that runs inside a training loop, for the fault campaign.

One process per node, started by job.sbatch's srun (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT),
gloo on the CPU. With ``--automations on`` (the default) each step goes through:

- the NaN guard (skip policy): a non-finite loss or gradient norm, of the whole job (one
  all-reduce), never reaches the optimizer, and its batch is skipped for good;
- the loss-spike guard: a spike past its patience is rolled back to the newest checkpoint from
  before it that verifies, and the batches that led to it are skipped for good;
- the hang watchdog's heartbeat (the job runs under ``tooling watchdog``);
- SIGUSR1 (the scheduler's preemption warning) caught: save at the next step, then ``scontrol
  requeue`` the job, which resumes from that step;
- a save the storage guard refuses (no room for one more checkpoint) is said and training goes on
  from the last one; the next save tries again;
- on start, the newest checkpoint that verifies (a torn newest one is passed over, and said).

Each handling is one line of OUT/train.log signed ``[handled_by: AUTOMATION]``, which ``tooling
watch`` files as an incident of the right failure mode. With ``--automations off`` none of this
runs (USR1 kills the process, NaN and spikes train on, a failed save ends the job, the newest
checkpoint is loaded unverified): the campaign's scripted person (person.py) does the handling,
through OUT/person.json (batches to skip, for good), OUT/person-resume.json (a checkpoint to go
back to at most, for the next start only) and a requeue.

Rank 0 appends the timeline the campaign measures to OUT/steps.log: "restart R resumed N newest M
batch P at T" at every start, then "restart R step N batch P T0 T1" per step and "restart R saved|
refused N T0 T1", "restart R skipped batch P T0 T1", "restart R rollback N batch P T0 T1" (times:
time.time()). The data position P counts the batches the whole job has read, as in lab 6.
Started by campaign.py (see README.md); ``touch OUT/STOP`` ends the run after a save.
"""
from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="checkpoints (OUT/fs/checkpoints), logs, inject/")
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--ckpt-every", type=int, default=100, help="steps between sharded checkpoints")
    parser.add_argument("--keep", type=int, default=10, help="checkpoints kept (a person's rollback needs history)")
    parser.add_argument("--step-seconds", type=float, default=0.1, help="each node's work per step, besides the model")
    parser.add_argument("--automations", choices=["on", "off"], default="on")
    parser.add_argument("--run-id", dest="run", metavar="RUN", help="run id: report into runbooks/runs/<RUN>.yaml")
    parser.add_argument("--records", type=Path, help="the repository holding that run record")
    parser.add_argument("--kernel-logs", type=Path, help="the emulated nodes' stand-ins (FOLDER/NODE/dmesg)")
    return parser.parse_args()


ARGS = arguments()
preempted = False


def on_usr1(signum: int, frame: object) -> None:
    global preempted
    preempted = True  # only a flag: the loop saves at the next step boundary


if ARGS.automations == "on":  # before torch's import, which takes seconds: a USR1 then must not kill
    signal.signal(signal.SIGUSR1, on_usr1)

import logging  # noqa: E402  (after the handler, on purpose)
import time  # noqa: E402
from datetime import timedelta  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from tooling.resilience.ranks import any_rank, exit_rank  # noqa: E402
from tooling.resilience.reporter import RunReporter  # noqa: E402
from tooling.resilience.switch import Action, KillSwitch  # noqa: E402
from tooling.resilience.watchdog import Watchdog  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import Run, lab6  # noqa: E402  (this folder's: one rank's training, with the automations)


def train(args: argparse.Namespace, watchdog: Watchdog) -> int:
    run = Run(args)
    if run.rank == 0:
        handler = logging.FileHandler(args.out / "train.log")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s",
                                               "%Y-%m-%dT%H:%M:%S%z"))
        run.log.addHandler(handler)
        run.log.propagate = False
    run.resume()
    nodes: list[str] = [""] * run.world
    dist.all_gather_object(nodes, run.node)  # also: every rank has read the person's files
    once = args.out / "person-resume.json"
    if run.rank == 0 and once.exists():  # the person's checkpoint is for this start only
        once.rename(once.with_suffix(".done"))
    writer = lab6.report_resume(args, run.step, nodes) if run.rank == 0 and run.step else None
    reporter = RunReporter(args.run, root=args.records, every=5.0, sample_every=5.0, checkpoints=run.manager,
                           total_steps=args.steps) if args.run and run.rank == 0 else None
    run.said(f"restart {run.restart}: {run.world} ranks on {', '.join(nodes)}, from step {run.step}")
    switch = KillSwitch(args.out)
    while run.step < args.steps:
        run.train_step(reporter)
        watchdog.beat(run.step)
        stop = any_rank(switch.check() is Action.STOP)
        leave = any_rank(preempted) if run.on else False
        if (run.step % args.ckpt_every == 0 and run.step != run.saved) or stop or leave:
            run.save()
        if leave and run.rank == 0:
            run.requeue()
        if stop or leave:
            break
    run.manager.close()
    for closing in (reporter, run.spike_guard, run.nan_guard):
        if closing is not None:
            closing.close()
    if writer is not None:
        writer.wait(60)
    run.note(f"stopped {run.step} at {time.time():.3f}")
    return 0


def main() -> int:
    args = ARGS
    torch.set_num_threads(1)
    with Watchdog.from_env() as watchdog:  # inert unless the job runs under tooling watchdog
        # the ranks waiting for a stopped one fail within a minute, not gloo's default half hour
        dist.init_process_group("gloo", timeout=timedelta(seconds=60))
        (args.out / "inject").mkdir(parents=True, exist_ok=True)
        return train(args, watchdog)


if __name__ == "__main__":
    exit_rank(main())  # not sys.exit: see tooling/resilience/ranks.py (DTensor keeps gloo alive)
