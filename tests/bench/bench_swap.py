"""Benchmark of the swap onto a spare (issue 23): the time from an injected Xid 79 to training again
on the spare, beside the same job's own restart time (a plain `scontrol requeue`, no fault), in the
same run on the same cluster.

Run (as root: it starts lab 6's emulated cluster, in a folder and on ports of its own):
    ./dev bench   (or .venv/bin/python tests/bench/bench_swap.py [--rounds N] [--tiny])

Lab 6's job (labs/06-spare-nodes: three nodes, one torchrun each, a sharded checkpoint every 20
steps) runs on scripts/slurm-cluster (n1-n3, the spare n4, the health check every 5 s, the job
looking at its nodes every 2 s). Each round requeues it by hand and times it back to its first
step, then injects an Xid 79 into n2 and times it back to its first step on the spare, then returns
n2 to service. Printed per path, the median of the rounds, with its stages: to the drain (fault
only), to the job back in the queue, to it running again (its wait in the queue: cred_expire + 1 s,
then the Prolog), to its first step (three interpreters importing torch and loading the checkpoint).
Figures, never asserted. --tiny (1 round) is the smoke test's size.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(PROJECT / "labs" / "06-spare-nodes"))
import check as lab6  # noqa: E402  (lab 6's cluster, job and logs, from its self-check)
import cluster as lab6_cluster  # noqa: E402  (its records repository)

STAGES = ("drained", "queued", "running", "training")


def restarts(cluster: lab6.Cluster, job: str) -> int:
    return int(cluster.job(job).get("Restarts", "0"))


def timed(cluster: lab6.Cluster, out: Path, job: str, cause: str) -> dict[str, float]:
    """Cause the next restart (``requeue`` or ``fault``) and time its stages from that moment."""
    restart = restarts(cluster, job)
    stages: dict[str, float] = {}
    started = time.time()
    if cause == "fault":
        cluster.script("inject", "n2", "xid", "79")
        lab6.until(lambda: "drain" in cluster.node("n2")[0], "n2 drained", 120)
        stages["drained"] = time.time() - started
    else:
        cluster.sh("scontrol", "requeue", job)
    lab6.until(lambda: restarts(cluster, job) > restart and cluster.job(job)["JobState"] == "PENDING",
               "the job back in the queue", 120)
    stages["queued"] = time.time() - started
    lab6.until(lambda: cluster.job(job)["JobState"] == "RUNNING", "the job running again", 300)
    stages["running"] = time.time() - started
    first = lab6.until(lambda: lab6.trained(out, restart + 1)[:1], "its first step", 300)[0]
    stages["training"] = first[1] - started
    lab6.until(lambda: len(lab6.trained(out, restart + 1)) > lab6.CKPT_EVERY + 5, "a checkpoint after it", 300)
    return stages


def back_in_service(cluster: lab6.Cluster) -> None:
    """n2 repaired: its stand-ins healthy, its health state forgotten, resumed in SLURM."""
    cluster.script("inject", "n2", "clear")
    (cluster.folder / "health" / "n2.json").unlink(missing_ok=True)
    cluster.sh("scontrol", "update", "nodename=n2", "state=resume")
    lab6.until(lambda: "drain" not in cluster.node("n2")[0], "n2 back in service", 60)


def stuck(cluster: lab6.Cluster, out: Path, job: str) -> None:
    """What a wait that timed out leaves to read (a smoke run on a loaded CI machine): the job as
    SLURM shows it, the nodes, and the end of the job's output and of the trainer's step log."""
    tails = {p.name: p.read_text(errors="replace")[-1500:] for p in sorted(out.glob("*.out"))}
    try:  # stdout: the smoke test shows all of it, and only the end of stderr
        print(f"--- job {job}: {cluster.job(job)}\n--- nodes: {[cluster.node(n) for n in ('n1', 'n2', 'n3', 'n4')]}")
    except Exception as exc:  # the wait's own error is what the run ends with
        print(f"--- SLURM could not say: {exc}")
    print(f"--- steps trained: {len(lab6.trained(out, 0))}\n--- output: {tails}", flush=True)


def show(name: str, runs: list[dict[str, float]]) -> float:
    said = ", ".join(f"{stage} {statistics.median(r[stage] for r in runs):.1f} s" for stage in STAGES if stage in runs[0])
    total = statistics.median(r["training"] for r in runs)
    print(f"{name:<34} {total:6.1f} s to training again ({said}; median of {len(runs)})")
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tiny", action="store_true")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench_swap: starts SLURM daemons: run it as root")
    rounds = 1 if args.tiny else args.rounds
    cluster = lab6.Cluster(Path("/tmp/playbook-bench-swap"), 17610)
    plain: list[dict[str, float]] = []
    fault: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        out, records = Path(tmp) / "run", lab6_cluster.records_repository(Path(tmp) / "records")
        out.mkdir()
        try:
            cluster.script("start", "--nodes", "3", "--spares", "1", "--records", str(records),
                           "--health-interval", str(lab6.HEALTH_INTERVAL))
            job = lab6.submit(cluster, out, records)
            try:
                lab6.until(lambda: len(lab6.trained(out, 0)) > 2 * lab6.CKPT_EVERY, "the job to train", 300)
            except AssertionError:
                stuck(cluster, out, job)
                raise
            for _ in range(rounds):
                plain.append(timed(cluster, out, job, "requeue"))
                assert cluster.job(job)["NodeList"] == "n[1-3]", cluster.job(job)  # n2 in the job, to lose
                fault.append(timed(cluster, out, job, "fault"))
                assert cluster.job(job)["NodeList"] == "n[1,3-4]", cluster.job(job)  # on the spare
                back_in_service(cluster)
            (out / "STOP").touch()
        finally:
            cluster.script("stop")
    print(f"lab 6's job on {os.cpu_count()} cores, health check every {lab6.HEALTH_INTERVAL} s, the job's look "
          f"every {lab6_cluster.NODE_WATCH} s, one sharded checkpoint every {lab6.CKPT_EVERY} steps")
    base = show("plain requeue (the job's restart)", plain)
    swapped = show("Xid 79 -> drain -> spare", fault)
    print(f"ratio fault/plain : {swapped / base:.2f}x (the fault's extra {swapped - base:.1f} s: the health "
          f"check's interval and the job's look)")


if __name__ == "__main__":
    main()
