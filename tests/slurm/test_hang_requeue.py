"""A job whose hang the watchdog ended comes back by itself (issue 24 item 6): `tooling watchdog`
exits 75 once it has kept every rank's stack, drafted the hang incident and killed the job "so
that auto-resume restarts it"; `tooling job`, the batch shell, is that auto-resume: it requeues the
job, whose end says why, and drafts no second incident for the same hang. A job that may not be
requeued ends as it is."""
from __future__ import annotations

import sys
from pathlib import Path

from emulated import Cluster, Hook, until

from support import tooling
from tooling.records.load import load_file
from tooling.slurm.wrap import HANG_REQUEUED

# the watchdog's exit on the first run, a clean end on the next: what a hung job resumed does
TRAINER = "srun bash -c '[ \"${SLURM_RESTART_COUNT:-0}\" = 0 ] && exit 75; exit 0'"


def events(root: Path, job: str) -> list[dict]:  # type: ignore[type-arg]
    found = load_file(str(root / "runbooks" / "runs" / "hang.yaml")).data.get("feed", {}).get("events", [])
    return [e for e in found if e["job_id"] == job and e["kind"] != "signal"]


def submit(cluster: Cluster, root: Path, tmp_path: Path, requeue: str) -> str:
    made = tooling("new-run", "hang", "--title", "A hang ended by the watchdog", "--owner", "ci", cwd=root)
    assert made.returncode == 0, made.stderr
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/bash\nexec {sys.executable} -m tooling --root {root} job hang --node-watch 0 -- "
                      f"{TRAINER}\n")
    return cluster.sh("sbatch", "--parsable", "--nodes=1", requeue, f"--output={tmp_path}/out-%j.txt", str(script))


def test_a_trainer_the_hang_watchdog_ended_is_requeued_and_resumes(cluster: Cluster, hook: Hook,
                                                                 tmp_path: Path) -> None:
    cluster.reset("n1", "n2", "n3", "n4")
    job = submit(cluster, hook.records, tmp_path, "--requeue")
    until(lambda: [e["kind"] for e in events(hook.records, job)][-1:] == ["end"] and len(events(hook.records, job)) == 5,
          f"job {job}'s second end", seconds=120)
    found = events(hook.records, job)
    assert [(e["kind"], e.get("exit_code"), e.get("state") or e.get("detail")) for e in found] == [
        ("start", None, None), ("end", 75, "REQUEUED"), ("requeue", None, "back from the queue: restart 1"),
        ("start", None, "restart 1"), ("end", 0, "COMPLETED")]
    assert found[1]["detail"] == HANG_REQUEUED and "incident" not in found[1]
    assert hook.incidents() == []  # the watchdog files the hang; the job adds none
    checked = tooling("validate", cwd=hook.records)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_job_that_may_not_be_requeued_ends_failed_with_the_watchdogs_exit(cluster: Cluster, hook: Hook,
                                                                            tmp_path: Path) -> None:
    cluster.reset("n1", "n2", "n3", "n4")
    job = submit(cluster, hook.records, tmp_path, "--no-requeue")
    until(lambda: [e["kind"] for e in events(hook.records, job)][-1:] == ["end"], f"job {job}'s end", seconds=120)
    [start, end] = events(hook.records, job)
    assert (start["kind"], end["exit_code"], end["state"], "detail" in end) == ("start", 75, "FAILED", False)
