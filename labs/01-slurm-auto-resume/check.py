"""Self-check of lab 1, on a real SLURM (start one with: scripts/slurm-local start).

Submits the job array, then interrupts the running task four ways: scancel, SIGKILL of the
trainer, a preemption (scontrol requeue) and the early warning (USR1, as --signal sends it
before the time limit). Each time the next task resumes from the last checkpoint; the run ends
at the planned step, with no step trained twice beyond the checkpoint interval, and the warned
task saves before it goes. Then the real thing, one to two minutes: a job with a two-minute time
limit gets USR1 from SLURM itself 90 s before it, saves, requeues itself, and resumes from that step.

All of it lands in a run record of a throwaway repository (made with `tooling new-run`): the
trainer's RunReporter writes progress every second, `tooling job` (job.sbatch) the job events.
All the while a person edits the same file in an editor (person.py: a ruamel round trip that
changes the summary and adds a comment, saved without the lock, which an editor knows nothing
of) and checks after each save that the machines' next write kept the edit. At the end the record
holds the events of every task (start, signal, requeue, end, an incident for the killed
trainer), the progress of the runs before and after the requeue, every one of the person's
edits, and `tooling validate` passes.

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
from datetime import datetime
from pathlib import Path

from person import Person  # beside this script: a person editing the run record in an editor

HERE = Path(__file__).resolve().parent
TOTAL, CKPT_EVERY = 400, 20
RUN = "lab1"


def sh(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


def steps(out: Path) -> list[tuple[str, str, int]]:
    path = out / "steps.log"
    lines = path.read_text().splitlines() if path.exists() else []
    parsed = [re.fullmatch(r"task=(\S+) restart=(\d+) step=(\d+)", line) for line in lines]
    return [(m.group(1), m.group(2), int(m.group(3))) for m in parsed if m]


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
    """The id of a running task (other than ``previous``) that has trained ``at_least`` steps
    since this call: its trainer is past its start-up, whichever run of the task it is."""
    deadline, seen = time.monotonic() + timeout, len(steps(out))
    while time.monotonic() < deadline:
        task = running(job)
        if task and task != previous:
            mine = [s for s in steps(out)[seen:] if s[0] == task.split("_")[1]]
            if len(mine) >= at_least:
                return task
        time.sleep(0.2)
    raise AssertionError(f"no task of job {job} made progress: {sh('squeue', '-j', job)}")


def trainer_pids(task: str) -> list[int]:
    """The trainer processes of an array task, found by the environment SLURM gave them."""
    wanted = f"SLURM_ARRAY_TASK_ID={task.split('_')[1]}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        try:  # the script is the first argument: `tooling job`, its parent, only names it later
            if proc.name.isdigit() and (proc / "cmdline").read_bytes().split(b"\0")[1:2] == [str(HERE / "train.py").encode()] \
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
        records = records_repository(out / "records")
        job = sh("sbatch", "--parsable", f"--chdir={out}", f"--export={export(out, records)}",
                 str(HERE / "job.sbatch"), "--total-steps", str(TOTAL), "--ckpt-every", str(CKPT_EVERY),
                 "--step-seconds", "0.02", "--report-every", "1")
        person = Person(records / "runbooks" / "runs" / f"{RUN}.yaml", rng)
        try:
            try:
                killed = interrupt(out, job, rng, person)
            finally:
                subprocess.run(["scancel", job], capture_output=True)
                person.stop()
            verify(out)
            verify_record(out, records, killed, person)
        except AssertionError:
            print(sh("squeue", "-j", job), file=sys.stderr)
            for output in sorted(out.glob("*.out")):
                print(f"--- {output.name}\n{output.read_text()[-1500:]}", file=sys.stderr)
            raise
        time_limit_warning(out / "time-limit", records)
    print("lab 1 self-check: passed")
    return 0


def interrupt(out: Path, job: str, rng: random.Random, person: Person) -> dict[str, str]:
    """Stop the running task four ways while a person edits the run record; task -> how."""
    killed: dict[str, str] = {}
    task = wait_for_progress(out, job, rng.randint(30, 70))
    person.start()  # from now on, until the check stops them: a person edits the record by hand
    sh("scancel", task)
    killed[task] = "scancel"
    print(f"scancel {task} at step {steps(out)[-1][2]}")
    task = wait_for_progress(out, job, rng.randint(30, 70), previous=task)
    pids = trainer_pids(task)
    assert pids, f"no trainer process found for {task}"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    killed[task] = "sigkill"
    print(f"SIGKILL of the trainer of {task} at step {steps(out)[-1][2]}")
    task = wait_for_progress(out, job, rng.randint(30, 70), previous=task)
    sh("scontrol", "requeue", task)
    killed[task] = "requeue"
    print(f"scontrol requeue {task} (preemption) at step {steps(out)[-1][2]}")
    # the requeued task is eligible again after slurm.conf's cred_expire + 1 s; meanwhile the
    # array's next task may take its turn, so whichever runs next is the one warned
    until(lambda: "JobState=PENDING" in sh("scontrol", "show", "job", task), f"{task} pending again")
    task = wait_for_progress(out, job, rng.randint(10, 40))
    warned_at = steps(out)[-1][2]
    # scancel's exit status is not reliable for --batch signals: watch the task's output instead
    subprocess.run(["scancel", "--batch", "--signal=USR1", task], capture_output=True)
    killed.setdefault(task, "usr1")
    output = out / f"lab1-auto-resume-{task}.out"
    until(lambda: output.exists() and "USR1: saved step" in output.read_text(), f"{task} saving on USR1")
    print(f"USR1 to the batch shell of {task} at step {warned_at}")
    deadline = time.monotonic() + 300
    while sh("squeue", "-h", "-j", job) and time.monotonic() < deadline:
        time.sleep(0.5)
    return killed


def time_limit_warning(out: Path, records: Path) -> None:
    """slurmctld looks at time limits every 30 s and sends the warning at the first look that
    finds less than 60 + 30 s of the 3-minute limit left: 90 to 120 s into the job. It sends it
    once, and drops it while the job is still in its Prolog, so the warning must not be due at
    the start: `--time=2 --signal=B:USR1@90` (due at once) ended in a plain time-out on a loaded
    machine (slurmctld's job_mgr.c, send_job_warn_signal). The job requeues itself and the same job
    id resumes: the run record then holds both runs of the job, their events and their progress."""
    out.mkdir()
    job = sh("sbatch", "--parsable", "--array=1", "--time=3", "--signal=B:USR1@60", f"--chdir={out}",
             f"--export={export(out, records)}", str(HERE / "job.sbatch"), "--total-steps", "1000000",
             "--ckpt-every", str(CKPT_EVERY), "--step-seconds", "0.02", "--requeue", "--report-every", "1")
    task, output = f"{job}_1", out / f"lab1-auto-resume-{job}_1.out"

    def printed() -> str:
        return output.read_text() if output.exists() else ""
    try:
        until(lambda: "USR1: saved step" in printed(), "SLURM's USR1 before the time limit", seconds=240)
        saved = int(re.findall(r"USR1: saved step (\d+)", printed())[0])
        # back from the queue after cred_expire + 1 s (scripts/slurm-local), then torch's import:
        # seconds on a quiet machine, once more than two minutes on a loaded one
        until(lambda: f"restart 1: resumed from step {saved}" in printed(), f"{task} resuming from {saved}",
              seconds=300)
        until(lambda: progress_around_requeue(records, task, saved)[1], f"{task}'s progress after the resume")
    except AssertionError:
        state = subprocess.run(["scontrol", "show", "job", task], capture_output=True, text=True).stdout
        print(f"--- {output.name}\n{printed()[-1500:]}\n--- scontrol show job {task}\n{state}\n--- run record "
              f"events of {task}: {in_order(records, task, [])}", file=sys.stderr)
        raise
    finally:
        subprocess.run(["scancel", job], capture_output=True)
    until(lambda: ("end", "CANCELLED") in in_order(records, task, []), f"{task}'s end after scancel")
    timeline = in_order(records, task, [("start", None), ("signal", "USR1"), ("end", "REQUEUED"),
                                        ("requeue", None), ("start", None), ("signal", "TERM"), ("end", "CANCELLED")])
    before, after = progress_around_requeue(records, task, saved)
    print(f"time limit: SLURM's own USR1 came, step {saved} was saved, the job requeued itself and "
          f"resumed from step {saved} with SLURM_RESTART_COUNT=1; the run record holds its events {timeline} "
          f"and the progress of both runs: steps {before[0]}..{before[-1]}, then {after[0]}..{after[-1]}")


def progress_around_requeue(records: Path, job_id: str, saved: int) -> tuple[list[int], list[int]]:
    """The steps the run record's samples show before the job's requeue (up to ``saved``) and
    after it came back (past ``saved``)."""
    found = events(records, job_id)
    left = next((when(e["at"]) for e in found if e["kind"] == "end" and e.get("state") == "REQUEUED"), None)
    back = next((when(e["at"]) for e in found if e["kind"] == "requeue"), None)
    if left is None or back is None:
        return [], []
    samples = record(records).get("feed", {}).get("samples", [])
    return ([s["step"] for s in samples if when(s["at"]) <= left and s["step"] <= saved],
            [s["step"] for s in samples if when(s["at"]) >= back and s["step"] > saved])


EXPECTED = {  # what tooling job writes for each way a task was stopped (a TERM may come in between)
    "scancel": [("start", None), ("signal", "TERM"), ("end", "CANCELLED")],
    "sigkill": [("start", None), ("end", "FAILED")],
    "requeue": [("start", None), ("end", "REQUEUED"), ("requeue", None), ("start", None)],
    "usr1": [("start", None), ("signal", "USR1"), ("end", "COMPLETED")],
}


def tooling(records: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tooling", "--root", str(records), *args],
                          capture_output=True, text=True, timeout=120)


def records_repository(root: Path) -> Path:
    """A throwaway playbook repository holding the run record of this check."""
    root.mkdir()
    (root / "mkdocs.yml").write_text("site_name: lab 1\n")
    made = tooling(root, "new-run", RUN, "--title", "Lab 1 auto-resume", "--owner", "lab")
    assert made.returncode == 0, made.stderr
    return root


def export(out: Path, records: Path) -> str:
    return (f"ALL,LAB1_OUT={out},LAB1_PYTHON={sys.executable},LAB1_TRAIN={HERE / 'train.py'},"
            f"LAB1_RECORDS={records},LAB1_RUN={RUN}")


def record(records: Path) -> dict:  # type: ignore[type-arg]
    from tooling.records.load import load_file
    return load_file(str(records / "runbooks" / "runs" / f"{RUN}.yaml")).data


def events(records: Path, job_id: str) -> list[dict]:  # type: ignore[type-arg]
    return [e for e in record(records).get("feed", {}).get("events", []) if e["job_id"] == job_id]


def when(value: object) -> datetime:
    return datetime.fromisoformat(str(value))


def in_order(records: Path, job_id: str, expected: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    """The job's timeline, checked to hold ``expected`` in that order (other events may come between)."""
    timeline = [(e["kind"], e.get("signal") or e.get("state")) for e in events(records, job_id)]
    rest = iter(timeline)
    assert all(any(seen == wanted for seen in rest) for wanted in expected), \
        f"job {job_id}: expected {expected} in its timeline, found {timeline}"
    return timeline


def verify_record(out: Path, records: Path, killed: dict[str, str], person: Person) -> None:
    data = record(records)
    assert person.problem is None, person.problem
    assert person.edits >= 3 and person.kept >= 3, f"too few hand edits while the jobs ran: {person.edits}"
    person.check(person.path.read_text())
    for task, how in killed.items():
        in_order(records, task, EXPECTED[how])
    failed = next(e for e in events(records, next(t for t, h in killed.items() if h == "sigkill")) if e["kind"] == "end")
    assert failed["exit_code"] == 137 and (records / "incidents" / f"{failed['incident']}.yaml").is_file(), failed
    requeued = next(t for t, h in killed.items() if h == "requeue")
    preempted = requeued.split("_")[1], "0"
    log = steps(out)
    last = max(i for i, s in enumerate(log) if s[:2] == preempted)
    resumed = log[last + 1][:2]  # the run that took over after the requeue: the task itself, or the next one
    ranges = [[s[2] for s in log if s[:2] == run] for run in (preempted, resumed)]
    left = when(next(e["at"] for e in events(records, requeued) if e["kind"] == "end"))
    samples = data["feed"]["samples"]
    before = [s["step"] for s in samples if when(s["at"]) <= left and min(ranges[0]) <= s["step"] <= max(ranges[0])]
    after = [s["step"] for s in samples if when(s["at"]) >= left and min(ranges[1]) <= s["step"] <= max(ranges[1])]
    assert before and after, f"no progress of the runs before and after the requeue of {requeued} in {samples}"
    assert data["progress"]["step"] == TOTAL and data["last_good_checkpoint"]["step"] == TOTAL, data["progress"]
    assert data["last_good_checkpoint"]["verified"] is True
    checked = tooling(records, "validate")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    print(f"run record: {len(data['feed']['events'])} job events, {len(samples)} progress samples; the "
          f"requeued task {requeued} reported steps {before[0]}..{before[-1]}, task {resumed[0]} (restart {resumed[1]}) "
          f"{after[0]}..{after[-1]} after it; the killed trainer's end links {failed['incident']}; the person's "
          f"{person.edits} hand edits in an editor ({person.reopened} reopened as a machine wrote meanwhile, "
          f"{person.kept} checked after the machines' next write) and the comments are all still there; "
          "tooling validate passes")


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
