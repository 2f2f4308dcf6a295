"""The swap with no person (issue 23, item 3), on the emulated cluster: a job wrapped by `tooling job`
whose node the health check drains for a hardware fault records the drain (the node, the reason,
its incident) and requeues itself; SLURM starts it again on the spare, and the run record's
timeline says so with the nodes. A node drained for anything else, or a job that may not be
requeued, is left to run. Lab 6 does the same with a real training (labs/06-spare-nodes/check.py)."""
from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from emulated import Cluster, Hook, until

from support import tooling
from tooling.records.load import load_file

REQUEUED = "requeueing the job, so that it starts again without it"


def run_record(root: Path) -> Path:
    made = tooling("new-run", "swap", "--title", "Swap onto a spare", "--owner", "ci", cwd=root)
    assert made.returncode == 0, made.stderr
    return root / "runbooks" / "runs" / "swap.yaml"


def events(record: Path, job: str) -> list[dict]:  # type: ignore[type-arg]
    found = load_file(str(record)).data.get("feed", {}).get("events", [])
    return [e for e in found if e["job_id"] == job and e["kind"] != "signal"]  # a TERM may come or not


def seen(record: Path, job: str, tmp_path: Path) -> Callable[[], str]:
    """What a timed-out wait shows: the job's events, its output (the wrapper's warnings) and state."""
    def show() -> str:
        outs = {p.name: p.read_text()[-2000:] for p in tmp_path.glob("out-*.txt")}
        return f"events {events(record, job)}; output {outs}"
    return show


def submit(cluster: Cluster, root: Path, tmp_path: Path, *options: str) -> str:
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/bash\nexec {sys.executable} -m tooling --root {root} job swap --node-watch 1 -- "
                      "srun bash -c 'echo $SLURMD_NODENAME; sleep 300'\n")
    return cluster.sh("sbatch", "--parsable", "--nodes=3", *options, f"--output={tmp_path}/out-%j.txt", str(script))


def test_a_node_drained_for_its_gpu_makes_the_job_requeue_itself_onto_the_spare(
        cluster: Cluster, hook: Hook, tmp_path: Path) -> None:
    cluster.reset("n1", "n2", "n3", "n4")
    record = run_record(hook.records)
    job = submit(cluster, hook.records, tmp_path, "--requeue")
    until(lambda: events(record, job), f"job {job} to start", seconds=120)
    cluster.inject("n2", "xid", "79")
    assert hook.run("n2")[0] == 1  # the periodic check, as slurmd runs it: n2 drained, its incident filed
    [filed] = hook.incidents()
    until(lambda: len(events(record, job)) >= 5, f"job {job} back from the queue", seconds=120,
          seen=seen(record, job, tmp_path))
    assert " NodeList=n[1,3-4]" in cluster.sh("scontrol", "show", "job", job)  # the spare took n2's place
    cluster.sh("scancel", job)
    until(lambda: events(record, job)[-1]["kind"] == "end" and len(events(record, job)) == 6, f"job {job}'s end",
          seen=seen(record, job, tmp_path))
    found = events(record, job)
    assert [(e["kind"], e["host"], e.get("state") or e.get("detail")) for e in found] == [
        ("start", "n1", "on n[1-3]"),
        ("drain", "n2", f"gpu.fell-off-bus Xid 79 GPU 0, {filed.stem}; {REQUEUED}"),
        ("end", "n1", "REQUEUED"),
        ("requeue", "n1", "back from the queue: restart 1 on n[1,3-4]"),
        ("start", "n1", "restart 1 on n[1,3-4]"),
        ("end", "n1", "CANCELLED")]
    assert found[1]["incident"] == filed.stem  # the run page links the drained node's incident
    assert found[1]["at"] <= found[2]["at"]  # at the time SLURM drained it, before the job left
    checked = tooling("validate", cwd=hook.records)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_drain_for_anything_else_or_a_job_that_may_not_be_requeued_is_left_to_run(
        cluster: Cluster, hook: Hook, tmp_path: Path) -> None:
    cluster.reset("n1", "n2", "n3", "n4")
    record = run_record(hook.records)
    job = submit(cluster, hook.records, tmp_path, "--no-requeue")
    until(lambda: events(record, job), f"job {job} to start", seconds=120)
    cluster.sh("scontrol", "update", "nodename=n2", "state=drain", "reason=reboot for the new kernel")  # an admin
    time.sleep(3)  # three looks of the job's watch: the job may finish on a node drained for maintenance
    assert [e["kind"] for e in events(record, job)] == ["start"]
    assert "Restarts=0" in cluster.sh("scontrol", "show", "job", job)
    cluster.inject("n2", "xid", "79")
    assert hook.run("n2")[0] == 1  # now its GPU: the reason names the failure and the incident
    [filed] = hook.incidents()
    until(lambda: len(events(record, job)) == 2, "the drain in the run record", seconds=30,
          seen=seen(record, job, tmp_path))
    drain = events(record, job)[1]
    assert (drain["kind"], drain["host"], drain["incident"], drain["detail"]) == (
        "drain", "n2", filed.stem, f"gpu.fell-off-bus Xid 79 GPU 0, {filed.stem}; the job cannot be requeued "
                                   "(sbatch --no-requeue): it goes on without a swap")
    shown = cluster.sh("scontrol", "show", "job", job)
    assert "JobState=RUNNING" in shown and "Restarts=0" in shown and " NodeList=n[1-3]" in shown
    cluster.sh("scancel", job)
    until(lambda: events(record, job)[-1]["kind"] == "end", f"job {job}'s end", seen=seen(record, job, tmp_path))
    assert [e["kind"] for e in events(record, job)] == ["start", "drain", "end"]


def test_a_trainer_that_dies_with_its_gpu_is_requeued_at_its_end_not_ended_failed(
        cluster: Cluster, hook: Hook, tmp_path: Path) -> None:
    # the rank on n2 dies as the GPU goes (here: once n2 is drained); the job's own look is an hour
    # away, so only the look at the trainer's failure can see the node's drain and requeue the job
    cluster.reset("n1", "n2", "n3", "n4")
    record = run_record(hook.records)
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/bash\nexec {sys.executable} -m tooling --root {hook.records} job swap "
                      "--node-watch 3600 -- srun bash -c 'until sinfo -h -n n2 -o %T | grep -q drain; "
                      "do sleep 0.2; done; exit 1'\n")
    job = cluster.sh("sbatch", "--parsable", "--nodes=3", "--requeue", f"--output={tmp_path}/out-%j.txt", str(script))
    until(lambda: events(record, job), f"job {job} to start", seconds=120)
    cluster.inject("n2", "xid", "79")
    assert hook.run("n2")[0] == 1
    [filed] = hook.incidents()
    # back on n[1,3-4], where its trainer fails again at once: no node of its own is lost this time
    until(lambda: [e["kind"] for e in events(record, job)][-1:] == ["end"] and len(events(record, job)) == 6,
          f"job {job}'s second end", seconds=120, seen=seen(record, job, tmp_path))
    found = events(record, job)
    assert [(e["kind"], e["host"], e.get("state") or e.get("detail")) for e in found] == [
        ("start", "n1", "on n[1-3]"),
        ("drain", "n2", f"gpu.fell-off-bus Xid 79 GPU 0, {filed.stem}; {REQUEUED}"),
        ("end", "n1", "REQUEUED"),
        ("requeue", "n1", "back from the queue: restart 1 on n[1,3-4]"),
        ("start", "n1", "restart 1 on n[1,3-4]"),
        ("end", "n1", "FAILED")]
    assert found[2]["exit_code"] == 1 and found[1]["incident"] == filed.stem
