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
- every rank resumed from the newest checkpoint whose shards all verify, read while the job
  waited in the queue, and at most one checkpoint interval of steps was trained twice;
- nothing was typed by a person: between the injection and the resume this check ran only
  commands that look (sinfo, squeue, scontrol show);
- the time from the injected line to training again, printed with its stages;
- a second Xid 79 on n2 is an occurrence of the same incident, not a new one;
- the run record's timeline: start on n[1-3], the drain of n2 linking its incident, the end
  (REQUEUED), the requeue and start on n[1,3-4], the trainer's resume naming its step and nodes,
  the end (COMPLETED, after `touch STOP`); `tooling validate` passes;
- scripts/slurm-cluster stop leaves nothing of the cluster running.

Run (as root): python labs/06-spare-nodes/check.py
Its cluster has a folder and ports of its own (LAB6_CLUSTER_DIR, default /tmp/playbook-lab6;
LAB6_CLUSTER_PORT, default 17510), beside scripts/slurm-local's and scripts/slurm-cluster's own.
About two minutes, most of it three interpreters importing torch, twice.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parents[1] / "scripts" / "slurm-cluster"
CKPT_EVERY, STEP_SECONDS, HEALTH_INTERVAL, NODE_WATCH = 20, 0.05, 5, 2
RUN = "lab6"
LOOKING = (("sinfo",), ("squeue",), ("scontrol", "show"))  # commands that change nothing


class Cluster:
    """The emulated cluster, and every command this check runs against it (``typed``)."""

    def __init__(self, folder: Path, port: int) -> None:
        self.folder = folder
        self.env = {**os.environ, "SLURM_CLUSTER_DIR": str(folder), "SLURM_CLUSTER_PORT": str(port),
                    "SLURM_CONF": str(folder / "slurm.conf")}
        self.typed: list[tuple[str, ...]] = []

    def sh(self, *command: str) -> str:
        self.typed.append(command)
        done = subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise AssertionError(f"{' '.join(command)} exited {done.returncode}: {done.stdout}{done.stderr}")
        return done.stdout.strip()

    def script(self, *args: str) -> str:
        return self.sh(str(SCRIPT), *args)

    def job(self, job: str) -> dict[str, str]:
        """`scontrol show job -o`'s fields (values run to the next key)."""
        text = self.sh("scontrol", "show", "job", "-o", job)
        return dict(re.findall(r"(?:^| )([A-Za-z:/]+)=(.*?)(?= [A-Za-z:/]+=|$)", text))

    def node(self, name: str) -> tuple[str, str]:
        """The node's state and drain reason, as sinfo says them."""
        state, _, reason = self.sh("sinfo", "-h", "-N", "-n", name, "-o", "%T|%E").partition("|")
        return state, reason

    def typed_since(self, mark: int) -> list[str]:
        """The commands run after the first ``mark`` that are not a look."""
        return [" ".join(c) for c in self.typed[mark:] if not any(c[:len(w)] == w for w in LOOKING)]


def until(condition, what: str, seconds: float = 180):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)
    return found


def log(out: Path) -> list[tuple[int, str, int, float]]:
    """OUT/steps.log as (restart, "step" or "saved", step, time)."""
    path = out / "steps.log"
    lines = path.read_text().splitlines() if path.exists() else []
    found = (re.fullmatch(r"restart (\d+) (step|saved) (\d+) at ([\d.]+)", line) for line in lines)
    return [(int(m[1]), m[2], int(m[3]), float(m[4])) for m in found if m]


def ranks(out: Path, restart: int) -> list[tuple[str, str, int, int]]:
    """OUT/ranks.log's lines of one restart: (rank, node, world, resumed from)."""
    path = out / "ranks.log"
    lines = path.read_text().splitlines() if path.exists() else []
    found = (re.fullmatch(rf"restart {restart} rank (\d+) node (\S+) world (\d+) resumed (\d+)", line)
             for line in lines)
    return sorted((m[1], m[2], int(m[3]), int(m[4])) for m in found if m)


def trained(out: Path, restart: int) -> list[tuple[int, float]]:
    return [(step, at) for r, kind, step, at in log(out) if r == restart and kind == "step"]


def newest_verified(folder: Path) -> int | None:
    """The newest committed step whose every shard has its size and CRC-32, read now."""
    from tooling.resilience.dcp_manifest import shard_intact
    from tooling.resilience.dcp_resume import committed_steps

    good = [e.step for e in committed_steps(folder) if all(shard_intact(folder / e.folder, s) for s in e.shards)]
    return max(good, default=None)


def tooling(records: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tooling", "--root", str(records), *args],
                          capture_output=True, text=True, timeout=120)


def records_repository(root: Path) -> Path:
    """A throwaway playbook repository: the run record, and the incidents the health check files."""
    root.mkdir()
    (root / "mkdocs.yml").write_text("site_name: lab 6\n")
    made = tooling(root, "new-run", RUN, "--title", "Lab 6 spare nodes", "--owner", "lab")
    assert made.returncode == 0, made.stderr
    return root


def submit(cluster: Cluster, out: Path, records: Path, *args: str) -> str:
    export = (f"ALL,LAB6_OUT={out},LAB6_PYTHON={sys.executable},LAB6_TRAIN={HERE / 'train.py'},"
              f"LAB6_RECORDS={records},LAB6_RUN={RUN},LAB6_NODE_WATCH={NODE_WATCH}")
    return cluster.sh("sbatch", "--parsable", f"--chdir={out}", f"--export={export}", str(HERE / "job.sbatch"),
                      "--ckpt-every", str(CKPT_EVERY), "--step-seconds", str(STEP_SECONDS), *args)


def events(records: Path, job: str) -> list[dict]:  # type: ignore[type-arg]
    from tooling.records.load import load_file
    data = load_file(str(records / "runbooks" / "runs" / f"{RUN}.yaml")).data
    return [e for e in data.get("feed", {}).get("events", []) if e["job_id"] == job]


def incident(records: Path, number: str) -> dict:  # type: ignore[type-arg]
    from tooling.records.load import load_file
    return load_file(str(records / "incidents" / f"{number}.yaml")).data


def main() -> int:
    if os.geteuid() != 0:
        print("lab 6 starts its own SLURM daemons: run it as root", file=sys.stderr)
        return 2
    folder = Path(os.environ.get("LAB6_CLUSTER_DIR", "/tmp/playbook-lab6"))
    cluster = Cluster(folder, int(os.environ.get("LAB6_CLUSTER_PORT", "17510")))
    with tempfile.TemporaryDirectory(dir=os.environ.get("LAB6_TMP")) as tmp:
        out, records = Path(tmp) / "run", records_repository(Path(tmp) / "records")
        out.mkdir()
        job = ""
        try:
            cluster.script("start", "--nodes", "3", "--spares", "1", "--records", str(records),
                           "--health-interval", str(HEALTH_INTERVAL))
            job = submit(cluster, out, records)
            swap(cluster, out, records, job)
        except AssertionError:
            diagnose(cluster, out, job)
            raise
        finally:
            left = subprocess.run([str(SCRIPT), "stop"], env=cluster.env, capture_output=True, text=True)
        assert left.returncode == 0, f"scripts/slurm-cluster stop left processes running: {left.stderr}"
    print("stopped the cluster: nothing of it is left running")
    print("lab 6 self-check: passed")
    return 0


def running(cluster: Cluster, job: str) -> bool:
    """Whether the job is still in the queue (said when it left it: its output tells why)."""
    assert cluster.sh("squeue", "-h", "-j", job), f"job {job} ended: {cluster.job(job).get('JobState')}"
    return True


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
    newest = newest_verified(out / "checkpoints")  # what a resume must load, read before the job is back
    assert newest is not None and not trained(out, 1), "read too late: the job trained again already"
    first = until(lambda: running(cluster, job) and trained(out, 1)[:1], "training again after the requeue", 300)[0]
    assert cluster.typed_since(mark) == [], f"typed after the injection: {cluster.typed_since(mark)}"
    before = trained(out, 0)[-1][0]
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


def diagnose(cluster: Cluster, out: Path, job: str) -> None:
    for command in (["squeue"], ["sinfo", "-N", "-o", "%N %T %E"], ["scontrol", "show", "job", job] if job else []):
        if command:
            done = subprocess.run(command, env=cluster.env, capture_output=True, text=True)
            print(f"--- {' '.join(command)}\n{done.stdout}{done.stderr}", file=sys.stderr)
    logs = cluster.folder / "log"
    for path in [*sorted(out.glob("*.out")), logs / "health-check.log", logs / "slurmctld.log"]:
        if path.exists():
            print(f"--- {path}\n{path.read_text()[-2500:]}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
