"""Lab 6's straggler variant (check.py --straggler): the lab's job on n1-n3 with n2 slowed on purpose.

Every rank of train.py times its own work of each step (StragglerDetector: one median per rank
gathered every 10 steps, a rank under 0.75 of the median rank's speed for 3 reports is named). The
job runs SLOW_FROM healthy steps, then n2's work takes SLOW_FACTOR times as long (SLOW_NODE=n2,
passed to every task by sbatch --export, as a throttled GPU slows a node without anyone changing
the training's command line). It verifies:

- the job's log names n2, and n2 only, in one straggler line, within 50 steps of the slowdown;
- the SLOW_FROM healthy steps before it named no one (the same run, the same detector: a healthy
  run of ten reports, the cheap way);
- `tooling watch` on the job's log files it in the run's repository as a throughput drop
  (training.throughput-drop, symptom slowdown) with n2 as the node and its rank, and files nothing
  else; `tooling validate` passes.
"""
from __future__ import annotations

import re
from pathlib import Path

from cluster import RUN, Cluster, ranks, submit, tooling, until

SLOW_NODE, SLOW_FACTOR, SLOW_FROM, STEPS, WITHIN = "n2", 2, 100, 160, 50
STEP_SECONDS = 0.05  # each node's work per step: n2's is 0.1 s once slowed
LINE = re.compile(r".* straggler: rank=(\d+) node=(\S+) score=([\d.]+) \(.*steps (\d+)-(\d+)\)")


def straggler(cluster: Cluster, out: Path, records: Path) -> None:
    job = submit(cluster, out, records, "--steps", str(STEPS), "--ckpt-every", str(STEPS), "--step-seconds",
                 str(STEP_SECONDS), export=f",SLOW_NODE={SLOW_NODE},SLOW_FACTOR={SLOW_FACTOR},SLOW_FROM={SLOW_FROM}")
    until(lambda: not cluster.queued(job), f"the job's {STEPS} steps", 300)
    state = cluster.job(job)
    assert (state["JobState"], state["NodeList"]) == ("COMPLETED", "n[1-3]"), state
    rank = next(r for r, node, _, _ in ranks(out, 0) if node == SLOW_NODE)
    log = out / f"lab6-spare-nodes-{job}.out"
    named = [line for line in log.read_text().splitlines() if "straggler:" in line]
    assert len(named) == 1, f"expected one straggler line, for {SLOW_NODE}: {named}"
    found = LINE.fullmatch(named[0])
    assert found, named[0]
    who, node, score, first, last = found[1], found[2], float(found[3]), int(found[4]), int(found[5])
    assert (who, node) == (rank, SLOW_NODE), named[0]
    assert SLOW_FROM <= first and last < SLOW_FROM + WITHIN, f"slowed from step {SLOW_FROM}: {named[0]}"
    print(f"{SLOW_NODE} (rank {rank}) slowed {SLOW_FACTOR}x from step {SLOW_FROM}: named at step {last} with "
          f"score {score:.2f} ({last - SLOW_FROM + 1} steps after, at most {WITHIN}); the {SLOW_FROM} healthy steps "
          f"before named no one")
    filed(records, log, rank, named[0])


def filed(records: Path, log: Path, rank: str, line: str) -> None:
    """`tooling watch` files the line as a throughput drop with the node, and nothing else."""
    from tooling.records.load import load_file

    watched = tooling(records, "watch", str(log), "--run", RUN, "--once", "--state", str(records / "watch-state"))
    assert watched.returncode == 0, watched.stdout + watched.stderr
    incidents = sorted((records / "incidents").glob("INC-*.yaml"))
    assert len(incidents) == 1, f"filed: {[p.name for p in incidents]}; tooling watch said: {watched.stdout}"
    number = incidents[0].stem
    assert watched.stdout == (f"created incidents/{number}.yaml: Throughput dropped (straggler) on rank {rank} "
                              f"({SLOW_NODE})\n"), watched.stdout
    data = load_file(str(incidents[0])).data
    assert (data["failure_mode"], data["symptom"], data["nodes"], data["ranks"], data["run"], data["signatures"]) == (
        "training.throughput-drop", "slowdown", [SLOW_NODE], [int(rank)], RUN, [line]), data
    checked = tooling(records, "validate")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    print(f"tooling watch filed {number}: training.throughput-drop on {SLOW_NODE}, rank {rank}, in run {RUN}; "
          f"nothing else filed; tooling validate passes")
