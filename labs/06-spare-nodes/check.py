"""Self-check of lab 6, on a real SLURM of emulated nodes that it starts itself (as root):
scripts/slurm-cluster start --nodes 3 --spares 1, i.e. n1-n3 and the spare n4, with the node
health check as Prolog and as HealthCheckProgram every 5 s.

Submits job.sbatch (three nodes, one torchrun each, a sharded checkpoint every 20 steps), lets it
train past a few checkpoints, then appends an Xid 79 to n2's kernel log (scripts/slurm-cluster
inject n2 xid 79: its GPU fell off the bus) and from then on only looks. It verifies:

- n2 is drained by the periodic health check, with a reason naming gpu.fell-off-bus and the
  incident it filed (in the lab's records repository);
- the job requeued itself (`tooling job --node-watch`) and is back at full size: three ranks on
  n1, n3 and the spare n4;
- every rank resumed from the newest checkpoint of the first run whose shards all verify, read by
  this check once the job left its nodes, and at most one checkpoint interval of steps was trained
  twice;
- nothing was typed by a person: between the injection and the resume this check ran only
  commands that look (sinfo, squeue, scontrol show);
- the time from the injected line to training again, printed with its stages;
- a second Xid 79 on n2 is an occurrence of the same incident, not a new one;
- the run record's timeline: start on n[1-3], the drain of n2 linking its incident, the end
  (REQUEUED), the requeue and start on n[1,3-4], the trainer's resume naming its step and nodes,
  the end (COMPLETED, after `touch STOP`); `tooling validate` passes;
- scripts/slurm-cluster stop leaves nothing of the cluster running.

Run (as root): python labs/06-spare-nodes/check.py [--straggler | --elastic]
About two minutes, most of it three interpreters importing torch, twice. The variants:
--straggler, one node slowed on purpose, named and filed as a throughput drop (check_straggler.py);
--elastic, torchrun --nnodes=2:3 going on at two nodes when one is lost and back at three when the
spare joins (check_elastic.py). The cluster each starts: cluster.py.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from cluster import (RUN, Cluster, newest_verified, on_cluster, ranks, running, submit, tooling, trained, until,
                     verified)

CKPT_EVERY, STEP_SECONDS, HEALTH_INTERVAL = 20, 0.05, 5


def events(records: Path, job: str) -> list[dict]:  # type: ignore[type-arg]
    from tooling.records.load import load_file
    data = load_file(str(records / "runbooks" / "runs" / f"{RUN}.yaml")).data
    return [e for e in data.get("feed", {}).get("events", []) if e["job_id"] == job]


def incident(records: Path, number: str) -> dict:  # type: ignore[type-arg]
    from tooling.records.load import load_file
    return load_file(str(records / "incidents" / f"{number}.yaml")).data


def spare(cluster: Cluster, out: Path, records: Path) -> None:
    """The lab: a node lost to an Xid 79, swapped for the spare with no person."""
    swap(cluster, out, records, submit(cluster, out, records, "--ckpt-every", str(CKPT_EVERY),
                                       "--step-seconds", str(STEP_SECONDS)))


def swap(cluster: Cluster, out: Path, records: Path, job: str) -> None:
    until(lambda: running(cluster, job) and len(trained(out, 0)) >= 3 * CKPT_EVERY + 5,
          "the job to train past three checkpoints", 300)
    assert cluster.job(job)["NodeList"] == "n[1-3]", cluster.job(job)
    injected = time.time()  # the line is appended within the next few milliseconds
    cluster.script("inject", "n2", "xid", "79")
    mark = len(cluster.typed)
    print(f"injected Xid 79 into n2 at step {trained(out, 0)[-1][0]}")
    # from here on the check only looks: the health check, tooling job and SLURM do the rest
    state, reason = until(lambda: (lambda n: n if "drain" in n[0] else None)(cluster.node("n2")), "n2 drained", 60)
    drained = time.time()
    match = re.fullmatch(r"gpu\.fell-off-bus Xid 79 GPU 0, (INC-\d+)", reason)
    assert match, f"n2's drain reason: {reason!r}"
    number = match[1]
    until(lambda: cluster.job(job).get("Restarts") == "1" and cluster.job(job)["JobState"] == "PENDING",
          "the job back in the queue", 60)
    requeued = time.time()
    before = trained(out, 0)[-1][0]  # the job left the nodes: its first run is over
    # what a resume must load, read by this check: the newest step of the first run whose shards
    # all verify (the second run's saves come after `before`; on a busy machine it may be back already)
    newest = newest_verified(out / "checkpoints", at_most=before)
    assert newest is not None, f"no checkpoint of the first run verifies: {sorted(verified(out / 'checkpoints'))}"
    first = until(lambda: running(cluster, job) and trained(out, 1)[:1], "training again after the requeue", 300)[0]
    assert cluster.typed_since(mark) == [], f"typed after the injection: {cluster.typed_since(mark)}"
    came_back = ranks(out, 1)
    assert [(node, world) for _, node, world, _ in came_back] == [("n1", 3), ("n3", 3), ("n4", 3)], came_back
    assert {resumed for *_, resumed in came_back} == {newest}, f"resumed {came_back}, newest verified {newest}"
    assert cluster.job(job)["NodeList"] == "n[1,3-4]", cluster.job(job)
    lost = before - newest
    assert 0 <= lost <= CKPT_EVERY, f"trained to {before}, resumed from {newest}: {lost} steps lost"
    print(f"n2 drained {drained - injected:.1f} s after the Xid ({reason}); the job requeued itself and waited in "
          f"the queue {requeued - injected:.1f} s after it; 3 ranks on n1, n3 and the spare n4 resumed from step "
          f"{newest}, the newest checkpoint that verifies ({lost} steps trained again, at most {CKPT_EVERY}); "
          f"training again {first[1] - injected:.1f} s after the injected line, with nothing typed")
    again(cluster, records, number)
    (out / "STOP").touch()  # the exercise is over: lab 2's switch ends the run after a save
    until(lambda: not cluster.sh("squeue", "-h", "-j", job), "the job to end after STOP", 120)
    timeline(records, job, number, newest)


def again(cluster: Cluster, records: Path, number: str) -> None:
    """A second Xid on the drained node: the same incident, one occurrence more."""
    cluster.script("inject", "n2", "xid", "79")
    until(lambda: incident(records, number).get("occurrences") == 2, f"{number}'s second occurrence", 60)
    filed = sorted(p.stem for p in (records / "incidents").glob("INC-*.yaml"))
    assert filed == [number], f"incidents filed: {filed}"
    filed_as = incident(records, number)
    assert (filed_as["failure_mode"], filed_as["nodes"]) == ("gpu.fell-off-bus", ["n2"]), filed_as
    print(f"a second Xid 79 on n2: {number} has 2 occurrences, no new incident")


def timeline(records: Path, job: str, number: str, newest: int) -> None:
    """The run record tells the swap: each expected event, in this order (others may come between)."""
    expected = [("start", "n1", "on n[1-3]"), ("drain", "n2", None), ("end", "n1", "REQUEUED"),
                ("requeue", "n1", "back from the queue: restart 1 on n[1,3-4]"),
                ("start", "n1", "restart 1 on n[1,3-4]"),
                ("resume", "n1", None), ("end", "n1", "COMPLETED")]
    found = until(lambda: (lambda e: e if e and e[-1]["kind"] == "end" and e[-1].get("state") == "COMPLETED" else None)(
        events(records, job)), "the end of the job in the run record", 60)
    seen = [(e["kind"], e.get("host"), e.get("state") or e.get("detail")) for e in found]
    rest = iter(seen)
    assert all(any(s[:2] == w[:2] and (w[2] is None or s[2] == w[2]) for s in rest) for w in expected), seen
    drain = next(e for e in found if e["kind"] == "drain")
    resume = next(e for e in found if e["kind"] == "resume")
    assert drain["incident"] == number, drain
    assert drain["detail"].startswith(f"gpu.fell-off-bus Xid 79 GPU 0, {number}; "), drain
    assert resume["step"] == newest and resume["detail"].endswith("3 ranks on n1, n3, n4"), resume
    checked = tooling(records, "validate")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    story = " -> ".join(f"{kind} {host}" for kind, host, _ in seen)
    print(f"run record: {story}; the drain links {number}; tooling validate passes")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="lab 6's self-check (as root: it starts its own SLURM)")
    variant = parser.add_mutually_exclusive_group()
    variant.add_argument("--straggler", action="store_true", help="one node slowed on purpose: named and filed")
    variant.add_argument("--elastic", action="store_true",
                         help="torchrun --nnodes=2:3 loses a node, then a spare joins")
    args = parser.parse_args(argv)
    if args.straggler:
        from check_straggler import straggler
        code, name = on_cluster(straggler, health_interval=0), "self-check (straggler)"
    elif args.elastic:
        from check_elastic import elastic
        code, name = on_cluster(elastic, health_interval=0), "self-check (elastic)"
    else:
        code, name = on_cluster(spare, health_interval=HEALTH_INTERVAL), "self-check"
    if code == 0:
        print(f"lab 6 {name}: passed")
    return code


if __name__ == "__main__":
    sys.exit(main())
