"""The emulated cluster as lab 6's self-checks drive it (check.py and its variants): the commands
they run against it, what the lab's jobs write, and the frame every check runs in (a cluster of
its own started as root, a throwaway records repository, diagnostics when a check fails, and
scripts/slurm-cluster stop leaving nothing of the cluster running).

Its cluster has a folder and ports of its own (LAB6_CLUSTER_DIR, default /tmp/playbook-lab6;
LAB6_CLUSTER_PORT, default 17510), beside scripts/slurm-local's and scripts/slurm-cluster's own.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parents[1] / "scripts" / "slurm-cluster"
RUN = "lab6"
LOOKING = (("sinfo",), ("squeue",), ("scontrol", "show"))  # commands that change nothing
NODE_WATCH = 2  # seconds between `tooling job`'s looks at the job's nodes (job.sbatch's LAB6_NODE_WATCH)


class Cluster:
    """The emulated cluster, and every command a check runs against it (``typed``)."""

    def __init__(self, folder: Path, port: int) -> None:
        self.folder = folder
        self.conf = folder / "slurm.conf"
        self.env = {**os.environ, "SLURM_CLUSTER_DIR": str(folder), "SLURM_CLUSTER_PORT": str(port),
                    "SLURM_CONF": str(self.conf)}
        self.typed: list[tuple[str, ...]] = []
        self.jobs: list[str] = []  # submitted, for the diagnostics

    def sh(self, *command: str) -> str:
        self.typed.append(command)
        done = subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise AssertionError(f"{' '.join(command)} exited {done.returncode}: {done.stdout}{done.stderr}")
        return done.stdout.strip()

    def script(self, *args: str) -> str:
        return self.sh(str(SCRIPT), *args)

    def sbatch(self, *args: str) -> str:
        """Submit; the job's id."""
        job = self.sh("sbatch", "--parsable", *args)
        self.jobs.append(job)
        return job

    def job(self, job: str) -> dict[str, str]:
        """`scontrol show job -o`'s fields (values run to the next key)."""
        text = self.sh("scontrol", "show", "job", "-o", job)
        return dict(re.findall(r"(?:^| )([A-Za-z:/]+)=(.*?)(?= [A-Za-z:/]+=|$)", text))

    def queued(self, *jobs: str) -> bool:
        return bool(self.sh("squeue", "-h", "-j", ",".join(jobs)))

    def node(self, name: str) -> tuple[str, str]:
        """The node's state and drain reason, as sinfo says them."""
        state, _, reason = self.sh("sinfo", "-h", "-N", "-n", name, "-o", "%T|%E").partition("|")
        return state, reason

    def typed_since(self, mark: int) -> list[str]:
        """The commands run after the first ``mark`` that are not a look."""
        return [" ".join(c) for c in self.typed[mark:] if not any(c[:len(w)] == w for w in LOOKING)]

    def lose(self, job: str, node: str) -> list[int]:
        """Kill every process of ``job`` on ``node`` at once (SIGKILL: its torchrun agent and its
        rank), as when the node's host dies; their PIDs. Only this cluster's: another cluster on
        the machine may run a job of the same number on a node of the same name."""
        wanted = {"SLURM_JOB_ID": job, "SLURMD_NODENAME": node, "SLURM_CONF": str(self.conf)}
        killed = []
        for pid in (int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()):
            try:
                pairs = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            except OSError:  # gone, or a zombie
                continue
            environ = dict(p.decode(errors="replace").split("=", 1) for p in pairs if b"=" in p)
            if all(environ.get(key) == value for key, value in wanted.items()):
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                except ProcessLookupError:
                    pass
        return killed


def until(condition, what: str, seconds: float = 180):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)
    return found


def log(out: Path) -> list[tuple[int, str, int, float]]:
    """OUT/steps.log's steps and saves as (restart, "step" or "saved", step, time)."""
    found = (re.fullmatch(r"restart (\d+) (step|saved) (\d+) at ([\d.]+)", line) for line in _lines(out / "steps.log"))
    return [(int(m[1]), m[2], int(m[3]), float(m[4])) for m in found if m]


def starts(out: Path) -> list[tuple[int, list[str], int, dict[str, int], float]]:
    """OUT/steps.log's starts of the training, in order: (world size, nodes by rank, resumed from,
    each node's failures its torchrun agent restarted its rank for so far, time)."""
    found = (re.fullmatch(r"restart \d+ world (\d+) on (\S+) resumed (\d+) torchrun-restarts (\S+) at ([\d.]+)", line)
             for line in _lines(out / "steps.log"))
    return [(int(m[1]), m[2].split(","), int(m[3]), dict(zip(m[2].split(","), map(int, m[4].split(",")))),
             float(m[5])) for m in found if m]


def ranks(out: Path, restart: int) -> list[tuple[str, str, int, int]]:
    """OUT/ranks.log's lines of one restart: (rank, node, world, resumed from)."""
    found = (re.fullmatch(rf"restart {restart} rank (\d+) node (\S+) world (\d+) resumed (\d+)", line)
             for line in _lines(out / "ranks.log"))
    return sorted((m[1], m[2], int(m[3]), int(m[4])) for m in found if m)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def trained(out: Path, restart: int) -> list[tuple[int, float]]:
    return [(step, at) for r, kind, step, at in log(out) if r == restart and kind == "step"]


def verified(folder: Path) -> list[int]:
    """The committed steps whose every shard has its size and CRC-32, read now."""
    from tooling.resilience.dcp_manifest import shard_intact
    from tooling.resilience.dcp_resume import committed_steps

    return [e.step for e in committed_steps(folder) if all(shard_intact(folder / e.folder, s) for s in e.shards)]


def newest_verified(folder: Path, *, at_most: int | None = None) -> int | None:
    """The newest committed step (at most ``at_most``) whose every shard has its size and CRC-32, read now."""
    return max((step for step in verified(folder) if at_most is None or step <= at_most), default=None)


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


def submit(cluster: Cluster, out: Path, records: Path, *args: str, export: str = "", node_watch: int = NODE_WATCH) -> str:
    """job.sbatch (three nodes, one torchrun each, `tooling job` around them), with train.py's ``args``."""
    export = (f"ALL,LAB6_OUT={out},LAB6_PYTHON={sys.executable},LAB6_TRAIN={HERE / 'train.py'},"
              f"LAB6_RECORDS={records},LAB6_RUN={RUN},LAB6_NODE_WATCH={node_watch}{export}")
    return cluster.sbatch(f"--chdir={out}", f"--export={export}", str(HERE / "job.sbatch"), *args)


def running(cluster: Cluster, job: str) -> bool:
    """Whether the job is still in the queue (said when it left it: its output tells why)."""
    assert cluster.sh("squeue", "-h", "-j", job), f"job {job} ended: {cluster.job(job).get('JobState')}"
    return True


def on_cluster(check: Callable[[Cluster, Path, Path], None], *, health_interval: int) -> int:
    """Run ``check(cluster, out, records)`` on a cluster of its own (n1-n3 and the spare n4, the node
    health check as Prolog and, every ``health_interval`` seconds, as HealthCheckProgram), with an
    empty OUT folder and a records repository; then stop the cluster and make sure nothing is left."""
    if os.geteuid() != 0:
        print("lab 6 starts its own SLURM daemons: run it as root", file=sys.stderr)
        return 2
    folder = Path(os.environ.get("LAB6_CLUSTER_DIR", "/tmp/playbook-lab6"))
    cluster = Cluster(folder, int(os.environ.get("LAB6_CLUSTER_PORT", "17510")))
    with tempfile.TemporaryDirectory(dir=os.environ.get("LAB6_TMP")) as tmp:
        out, records = Path(tmp) / "run", records_repository(Path(tmp) / "records")
        out.mkdir()
        try:
            cluster.script("start", "--nodes", "3", "--spares", "1", "--records", str(records),
                           "--health-interval", str(health_interval))
            check(cluster, out, records)
        except AssertionError:
            diagnose(cluster, out)
            raise
        finally:
            left = subprocess.run([str(SCRIPT), "stop"], env=cluster.env, capture_output=True, text=True)
        assert left.returncode == 0, f"scripts/slurm-cluster stop left processes running: {left.stderr}"
    print("stopped the cluster: nothing of it is left running")
    return 0


def diagnose(cluster: Cluster, out: Path) -> None:
    jobs = [["scontrol", "show", "job", job] for job in cluster.jobs]
    for command in (["squeue"], ["sinfo", "-N", "-o", "%N %T %E"], *jobs):
        done = subprocess.run(command, env=cluster.env, capture_output=True, text=True)
        print(f"--- {' '.join(command)}\n{done.stdout}{done.stderr}", file=sys.stderr)
    logs = cluster.folder / "log"
    for path in [*sorted(out.glob("*.out")), out / "steps.log", logs / "health-check.log", logs / "slurmctld.log"]:
        if path.exists():
            print(f"--- {path}\n{path.read_text()[-2500:]}", file=sys.stderr)
