"""Lab 6's elastic variant (check.py --elastic): what torch.distributed.elastic does when a node
of `torchrun --nnodes=2:3` is lost, and when a spare joins.

elastic.sbatch runs train.py on n1-n3 under torchrun with a c10d rendezvous hosted by n1's agent
(--max-restarts=3; last_call_timeout 10 s; a node silent for 5 s leaves the rendezvous). After two
checkpoints this check kills every process of the job on n2 at once (its agent and its rank, as
when its host dies), and then only looks. It verifies:

- the other two agents re-rendezvous without n2 and train at world size 2 on n1 and n3, resumed
  from the newest checkpoint that verifies (DCP reshards the model and optimizer from three ranks
  to two), with at most one checkpoint interval of steps trained twice, and the steps go on;
- a one-node job on the spare (sbatch --constraint=spare, LAB6_JOIN=1) joins the same rendezvous:
  the agents of n1 and n3 stop their ranks for the new member (torchrun does not count that as a
  restart) and all three train at world size 3 on n1, n3 and n4, again from the newest verified
  checkpoint, the steps going on;
- the time from the kill to training at two nodes, and from the spare's submission to training at
  three, printed; `touch STOP` ends every rank after a save and both jobs leave the queue.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import tooling.resilience.dcp_resume  # noqa: F401 (torch: imported now, not between a look and the kill)
from cluster import Cluster, log, newest_verified, running, starts, until

CKPT_EVERY, STEP_SECONDS, LOST = 20, 0.05, "n2"


def elastic(cluster: Cluster, out: Path, records: Path) -> None:
    export = f"ALL,LAB6_OUT={out},LAB6_PYTHON={sys.executable},LAB6_TRAIN={Path(__file__).with_name('train.py')}"
    script = str(Path(__file__).with_name("elastic.sbatch"))
    args = ("--ckpt-every", str(CKPT_EVERY), "--step-seconds", str(STEP_SECONDS))
    job = cluster.sbatch(f"--chdir={out}", f"--export={export}", script, *args)
    # the first rendezvous may close at two nodes if the third agent is late; then it grows to three
    until(lambda: running(cluster, job) and at(out, 3) and steps_since(out) >= 2 * CKPT_EVERY + 5,
          "three nodes training past two checkpoints", 300)
    world, nodes, _, _, _ = starts(out)[-1]
    assert sorted(nodes) == ["n1", "n2", "n3"], starts(out)
    count, newest = len(starts(out)), newest_verified(out / "checkpoints")
    killed_at = time.time()
    killed = cluster.lose(job, LOST)
    assert len(killed) >= 2, f"killed {killed}: expected {LOST}'s torchrun agent and its rank"
    print(f"killed {LOST}'s agent and rank (PIDs {', '.join(map(str, killed))}) at step {last_step(out)}, "
          f"newest verified checkpoint {newest}")
    restarts = starts(out)[-1][3]  # by node: the failures its agent restarted its rank for
    smaller = resumed(cluster, out, job, count, ["n1", "n3"], killed_at, "the agents left at two nodes")
    # the agent whose rank failed first counts a restart; one that sees it back in the rendezvous
    # before its own rank fails restarts for the membership change, which torchrun does not count
    after = starts(out)[-1][3]
    more = {n: after[n] - restarts[n] for n in after}
    assert set(more.values()) <= {0, 1} and 1 in more.values(), f"restarts counted for the loss: {more}"
    print(f"restarts torchrun counted for the loss, by node: {more} (of --max-restarts=3)")
    joined_at = time.time()
    spare = cluster.sbatch("--nodes=1", "--constraint=spare", f"--chdir={out}", f"--export={export},LAB6_JOIN=1",
                           script, *args)
    resumed(cluster, out, job, smaller, ["n1", "n3", "n4"], joined_at, f"the spare's job {spare} joined")
    assert cluster.job(spare)["NodeList"] == "n4", cluster.job(spare)
    assert starts(out)[-1][3] == {**after, "n4": 0}, f"a node joining is no restart: {starts(out)[-1][3]}"
    (out / "STOP").touch()
    until(lambda: not cluster.queued(job, spare), "both jobs to end after STOP", 180)
    states = {name: cluster.job(name)["JobState"] for name in (job, spare)}
    assert states[spare] == "COMPLETED", states
    print(f"STOP: every rank saved and ended; job {job} {states[job]} (its task on {LOST} was killed), "
          f"the spare's job {spare} {states[spare]}")


def at(out: Path, world: int) -> bool:
    """Whether the training's latest start is at ``world`` ranks."""
    found = starts(out)
    return bool(found) and found[-1][0] == world


def steps_since(out: Path) -> int:
    """Steps trained since the latest start."""
    found = starts(out)
    return sum(1 for _, kind, step, at in log(out) if kind == "step" and found and at >= found[-1][-1])


def last_step(out: Path) -> int:
    return max((step for _, kind, step, _ in log(out) if kind == "step"), default=0)


def resumed(cluster: Cluster, out: Path, job: str, count: int, nodes: list[str], since: float, what: str) -> int:
    """Wait for the next start, on ``nodes``; check it resumed from the newest verified checkpoint,
    losing at most one interval, and that the steps go on. The number of starts so far."""
    last: list[int | None] = [None]

    def started() -> bool:
        if running(cluster, job) and len(starts(out)) > count:
            return True
        last[0] = newest_verified(out / "checkpoints")  # until the start: what it must resume from
        return False

    until(started, f"{what}: a start on {', '.join(nodes)}", 300)
    world, ranked, step, _, started_at = starts(out)[-1]
    trained = max(s for _, kind, s, at in log(out) if kind == "step" and at < started_at)
    saved = {s: at for _, kind, s, at in log(out) if kind == "saved"}
    newest = last[0]
    assert newest is not None and saved[newest] < started_at, f"{what}: read {newest} too late: {saved}"
    assert (world, sorted(ranked)) == (len(nodes), nodes), f"{what}: started {starts(out)[-1]}"
    assert step == newest, f"{what}: resumed from {step}, the newest verified checkpoint is {newest}"
    assert 0 <= trained - step <= CKPT_EVERY, f"trained to {trained}, resumed from {step}"
    until(lambda: running(cluster, job) and steps_since(out) >= 10, f"{what}: ten steps at world size {world}", 120)
    going = [s for _, kind, s, at in log(out) if kind == "step" and at >= started_at]
    assert going[:10] == list(range(step + 1, step + 11)), f"{what}: steps after the start {going[:10]}"
    first = next(at for _, kind, s, at in log(out) if kind == "step" and at >= started_at)
    print(f"{what}: {world} ranks on {', '.join(ranked)} resumed from step {step}, the newest checkpoint that "
          f"verifies ({trained - step} steps trained again, at most {CKPT_EVERY}); training again "
          f"{first - since:.1f} s after")
    return len(starts(out))
