"""Self-check of lab 1, on a real SLURM (start one with: scripts/slurm-local start).

Submits the job array, then interrupts the running task four ways: scancel, SIGKILL of the
trainer, a preemption (scontrol requeue) and the early warning (USR1, as --signal sends it
before the time limit). Each time the next task resumes from the last checkpoint; the run ends
at the planned step, with no step trained twice beyond the checkpoint interval, and the warned
task saves before it goes. Then the real thing, about a minute: a job with a one-minute time
limit gets USR1 from SLURM itself, saves, requeues itself, and resumes from that step.

Run: python labs/01-slurm-auto-resume/check.py
"""
from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOTAL, CKPT_EVERY = 400, 20


def sh(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


def steps(out: Path) -> list[tuple[str, str, int]]:
    path = out / "steps.log"
    lines = path.read_text().splitlines() if path.exists() else []
    parsed = [re.fullmatch(r"task=(\S+) restart=(\d+) step=(\d+)", line) for line in lines]
    return [(m.group(1), m.group(2), int(m.group(3))) for m in parsed if m]


def retry(*cmd: str, seconds: float = 15) -> None:
    """Run a SLURM command that can fail while a task is still starting up."""
    deadline = time.monotonic() + seconds
    while True:
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{' '.join(cmd)} failed: {result.stderr.strip()}")
        time.sleep(0.2)


def until(condition, what: str, seconds: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def running(job: str) -> str | None:
    ids = sh("squeue", "-h", "-j", job, "-t", "RUNNING", "-o", "%i").split()
    return ids[0] if ids else None


def wait_for_progress(out: Path, job: str, at_least: int, previous: str | None = None,
                      timeout: float = 180) -> str:
    """The id of a running task (other than ``previous``) that has trained ``at_least`` steps."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        task = running(job)
        if task and task != previous:
            mine = [s for s in steps(out) if s[0] == task.split("_")[1]]
            if len(mine) >= at_least:
                return task
        time.sleep(0.2)
    raise AssertionError(f"no task of job {job} made progress: {sh('squeue', '-j', job)}")


def trainer_pids(task: str) -> list[int]:
    """The trainer processes of an array task, found by the environment SLURM gave them."""
    wanted = f"SLURM_ARRAY_TASK_ID={task.split('_')[1]}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and b"train.py" in (proc / "cmdline").read_bytes() \
                    and wanted in (proc / "environ").read_bytes().split(b"\0"):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def main() -> int:
    try:
        sh("sinfo")
    except (OSError, subprocess.CalledProcessError):
        print("no SLURM here: start one with scripts/slurm-local start and export SLURM_CONF", file=sys.stderr)
        return 2
    rng = random.Random(int(os.environ.get("LAB1_SEED", "0")))
    with tempfile.TemporaryDirectory(dir=os.environ.get("LAB1_TMP")) as tmp:
        out = Path(tmp)
        env = f"ALL,LAB1_OUT={out},LAB1_PYTHON={sys.executable},LAB1_TRAIN={HERE / 'train.py'}"
        job = sh("sbatch", "--parsable", f"--chdir={out}", f"--export={env}", str(HERE / "job.sbatch"),
                 "--total-steps", str(TOTAL), "--ckpt-every", str(CKPT_EVERY), "--step-seconds", "0.02")
        try:
            task = wait_for_progress(out, job, rng.randint(30, 70))
            sh("scancel", task)
            print(f"scancel {task} at step {steps(out)[-1][2]}")
            task = wait_for_progress(out, job, rng.randint(30, 70), previous=task)
            pids = trainer_pids(task)
            assert pids, f"no trainer process found for {task}"
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            print(f"SIGKILL of the trainer of {task} at step {steps(out)[-1][2]}")
            task = wait_for_progress(out, job, rng.randint(30, 70), previous=task)
            sh("scontrol", "requeue", task)
            print(f"scontrol requeue {task} (preemption) at step {steps(out)[-1][2]}")
            # a requeued job waits ~2 minutes for its BeginTime unless told otherwise, once it is pending
            until(lambda: "JobState=PENDING" in sh("scontrol", "show", "job", task), f"{task} pending again")
            retry("scontrol", "update", f"JobId={task}", "StartTime=now")
            task = wait_for_progress(out, job, rng.randint(10, 40), previous=None)
            warned_at = steps(out)[-1][2]
            # scancel's exit status is not reliable for --batch signals: watch the task's output instead
            subprocess.run(["scancel", "--batch", "--signal=USR1", task], capture_output=True)
            output = out / f"lab1-auto-resume-{task}.out"
            until(lambda: output.exists() and "USR1: saved step" in output.read_text(), f"{task} saving on USR1")
            print(f"USR1 to the batch shell of {task} at step {warned_at}")
            deadline = time.monotonic() + 300
            while sh("squeue", "-h", "-j", job) and time.monotonic() < deadline:
                time.sleep(0.5)
        except AssertionError:
            print(sh("squeue", "-j", job), file=sys.stderr)
            for output in sorted(out.glob("*.out")):
                print(f"--- {output.name}\n{output.read_text()[-1500:]}", file=sys.stderr)
            raise
        finally:
            subprocess.run(["scancel", job], capture_output=True)
        verify(out)
        time_limit_warning(out / "time-limit")
    print("lab 1 self-check: passed")
    return 0


def time_limit_warning(out: Path) -> None:
    """SLURM sends USR1 once less than 110 s of the 2-minute limit are left. slurmctld looks at
    time limits only every ~30 s and the trainer needs seconds to start (torch's import), so the
    window is wide: a 1-minute limit with a 50-s warning was missed on a loaded machine."""
    out.mkdir()
    env = f"ALL,LAB1_OUT={out},LAB1_PYTHON={sys.executable},LAB1_TRAIN={HERE / 'train.py'}"
    job = sh("sbatch", "--parsable", "--array=1", "--time=2", "--signal=B:USR1@110", f"--chdir={out}",
             f"--export={env}", str(HERE / "job.sbatch"), "--total-steps", "1000000",
             "--ckpt-every", str(CKPT_EVERY), "--step-seconds", "0.02", "--requeue")
    task, output = f"{job}_1", out / f"lab1-auto-resume-{job}_1.out"

    def printed() -> str:
        return output.read_text() if output.exists() else ""
    try:
        until(lambda: "USR1: saved step" in printed(), "SLURM's USR1 before the time limit", seconds=180)
        saved = int(re.findall(r"USR1: saved step (\d+)", printed())[0])
        until(lambda: "JobState=PENDING" in sh("scontrol", "show", "job", task), f"{task} requeued by rank 0")
        retry("scontrol", "update", f"JobId={task}", "StartTime=now")
        until(lambda: f"restart 1: resumed from step {saved}" in printed(), f"{task} resuming from {saved}")
    except AssertionError:
        print(f"--- {output.name}\n{printed()[-1500:]}", file=sys.stderr)
        raise
    finally:
        subprocess.run(["scancel", job], capture_output=True)
    print(f"time limit: SLURM's own USR1 came, step {saved} was saved, the job requeued itself and "
          f"resumed from step {saved} with SLURM_RESTART_COUNT=1")


def verify(out: Path) -> None:
    log = steps(out)
    assert log and log[-1][2] == TOTAL, f"the run did not reach step {TOTAL}: {log[-1:]}"
    outputs = "\n".join(p.read_text() for p in sorted(out.glob("*.out")))
    warned = re.search(r"USR1: saved step (\d+) before the time limit", outputs)
    assert warned, "the warned task did not save before exiting:\n" + outputs
    saved = int(warned.group(1))
    resumes = [int(m) for m in re.findall(r"resumed from step (\d+)", outputs)]
    assert saved in resumes, f"no task resumed from the step saved on USR1 ({saved}): {resumes}"
    retrained = [before - after for before, after in
                 ((log[i - 1][2], log[i][2] - 1) for i in range(1, len(log))) if after < before]
    assert retrained and all(r <= CKPT_EVERY for r in retrained), f"steps trained twice per restart: {retrained}"
    requeued = re.search(r"task (\d+) restart 1: resumed from step (\d+)", outputs)
    assert requeued, "the preempted task never ran again as a requeued job (SLURM_RESTART_COUNT=1)"
    print(f"reached step {TOTAL}; restarts re-trained {retrained} steps (at most {CKPT_EVERY}); "
          f"USR1 saved step {saved} and the next task resumed from it; the preempted task {requeued.group(1)} "
          f"ran again with SLURM_RESTART_COUNT=1 from step {requeued.group(2)}")


if __name__ == "__main__":
    sys.exit(main())
