"""Lab 7's fault campaign: lab 6's training on scripts/slurm-cluster (two nodes, the spare n3) while
a seeded schedule of faults is injected, each handled by the shipped automation, or, with the
automations off, by a scripted person after a fixed delay (person.py). check.py and
tests/bench/bench_campaign.py run it; this module is the cluster, the schedule and the injector.

The faults, and what injects them (the campaign only injects and looks: no command of a person):

    xid         scripts/slurm-cluster inject NODE xid 79: the node's GPU falls off the bus (its rank
                stops, as a rank on a lost GPU does)
    full-fs     another job fills the checkpoint file system (a 16 MiB tmpfs) up to its own storage
                guard and holds its folder until this run's next save has met the full disk
    nan         a batch of NaN at a data position a few steps ahead (OUT/inject/, faults.py)
    spike       a bad shard of 11 batches: one past the loss-spike guard's patience
    preemption  scancel --batch --signal=USR1 JOB: the scheduler's warning before it takes the nodes
    hang        one rank stops at a data position a few steps ahead, the others wait in a collective
    corrupt     the newest checkpoint torn (a shard cut to half) just after it was saved, then at
                once the hang or the Xid the schedule pairs it with: a torn checkpoint only matters
                to the resume after a crash
"""
from __future__ import annotations

import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
SCRIPT = PROJECT / "scripts" / "slurm-cluster"
RUN, NODES = "lab7", ("n1", "n2")
FAULTS = ("xid", "full-fs", "nan", "spike", "preemption", "hang", "corrupt")
SHORT = ("nan", "spike", "preemption")
CKPT_EVERY, STEP_SECONDS, HEALTH_INTERVAL, NODE_WATCH, HANG_TIMEOUT = 100, 0.1, 5, 2, 20
AHEAD, READY, SPIKE_LENGTH = 20, 110, 11  # steps ahead a fault is planted; steps after a start; a bad shard's length
STALE = """import sys, time, torch
from pathlib import Path
from tooling.resilience.checkpoint import CheckpointManager, StorageFull
manager, step = CheckpointManager(Path(sys.argv[1]), keep=100_000), 0
try:  # a job with a generous keep, writing until its own storage guard refuses
    while True:
        manager.save({"w": torch.zeros(int(sys.argv[2]) // 4)}, step)
        step += 1
except StorageFull:
    print(f"full after {step} checkpoints", flush=True)
while not Path(sys.argv[3]).exists():  # its folder held (no retention prunes it) until told
    time.sleep(0.1)
"""


sys.path.append(str(HERE.parent / "06-spare-nodes"))
from cluster import Cluster, until  # noqa: E402  (lab 6's: the emulated cluster, every command typed kept)


@dataclass(frozen=True)
class Planned:
    kind: str
    due: float  # seconds of training after which it comes
    target: str  # which of the job's nodes (xid) or ranks (nan, hang) it hits; "" for the others


def plan(kinds: tuple[str, ...], *, seed: int, gap: tuple[float, float]) -> list[Planned]:
    """The seeded schedule: the faults in a random order, one every ``gap`` seconds (uniform); a
    corrupt checkpoint comes just before the hang or the Xid it is paired with."""
    rng = random.Random(seed)
    order = [k for k in kinds if k != "corrupt"]
    rng.shuffle(order)
    if "corrupt" in kinds:
        partners = [i for i, kind in enumerate(order) if kind in ("hang", "xid")]
        assert partners, "a corrupt checkpoint needs a hang or an Xid after it"
        order.insert(rng.choice(partners), "corrupt")
    planned, due = [], 0.0
    for kind in order:
        due += 0.0 if planned and planned[-1].kind == "corrupt" else rng.uniform(*gap)
        target = str(rng.randrange(len(NODES))) if kind in ("xid", "nan", "hang") else ""
        planned.append(Planned(kind, round(due, 1), target))
    return planned


class Timeline:
    """What the trainer's OUT/steps.log says now, read on from where it was last read."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset, self.text = path, 0, ""
        self.first: float | None = None  # the first step's start
        self.since_start = self.step = self.position = self.starts = 0
        self.last = 0.0  # the last step's end
        self.saves: list[tuple[str, int]] = []  # ("saved" | "refused", step)
        self.read_at: list[tuple[int, float]] = []  # (data position, start) of every step and skipped batch

    def read(self) -> "Timeline":
        if self.path.exists():
            with self.path.open() as log:
                log.seek(self.offset)
                new = log.read()
            new = new[:new.rfind("\n") + 1]
            self.offset += len(new.encode())
            self.text += new
            for line in new.splitlines():
                self._line(line.split())
        return self

    def _line(self, words: list[str]) -> None:
        kind = words[2] if len(words) > 2 else ""
        if kind == "resumed":
            self.since_start, self.starts = 0, self.starts + 1
        elif kind == "step":
            self.since_start, self.step, self.position = self.since_start + 1, int(words[3]), int(words[5])
            self.last = float(words[7])
            self.first = self.first or float(words[6])
            self.read_at.append((self.position, float(words[6])))
        elif kind == "skipped":
            self.read_at.append((int(words[4]), float(words[5])))
        elif kind in ("saved", "refused"):
            self.saves.append((kind, int(words[3])))


class Campaign:
    """The cluster, the records, the job and the faults of one campaign, in ``work`` (as root)."""

    def __init__(self, work: Path, *, folder: Path, port: int, automations: bool) -> None:
        self.work, self.automations = work, automations
        self.out, self.records = work / "run", work / "records"
        self.cluster = Cluster(folder, port)
        self.timeline = Timeline(self.out / "steps.log")
        self.job = ""
        self.watch: subprocess.Popen[bytes] | None = None
        self.stale: subprocess.Popen[str] | None = None

    # --- the cluster, the records, the job -----------------------------------------------------
    def start(self) -> None:
        for folder in (self.out / "fs", self.records):
            folder.mkdir(parents=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "lab7-checkpoints", str(self.out / "fs")], check=True)
        (self.out / "fs" / "old-run").mkdir()  # another job's checkpoint folder on the same file system
        (self.records / "mkdocs.yml").write_text("site_name: lab 7\n")
        self.tooling("new-run", RUN, "--title", "Lab 7 fault campaign", "--owner", "lab")
        self.cluster.script("start", "--nodes", str(len(NODES)), "--spares", "1", "--records", str(self.records),
                            "--health-interval", str(HEALTH_INTERVAL if self.automations else 0))
        if self.automations:  # the retention pass of the periodic health check, and no drain for a full disk
            with (self.cluster.folder / "hooks" / "tooling-health.conf").open("a") as conf:
                conf.write(f'TOOLING_HEALTH_PATHS="$TOOLING_HEALTH_PATHS {self.out / "fs" / "old-run"}"\n'
                           "TOOLING_HEALTH_PRUNE_KEEP=2\nTOOLING_HEALTH_MIN_FREE=0\n")
            self.watch = subprocess.Popen([sys.executable, "-m", "tooling", "--root", str(self.records), "watch",
                                           str(self.out / "train.log"), "--run", RUN, "--interval", "2", "--state",
                                           str(self.work / "watch.json")], stdout=subprocess.DEVNULL)
        self.submit()

    def submit(self) -> str:
        export = ",".join(f"LAB7_{k}={v}" for k, v in {
            "OUT": self.out, "PYTHON": sys.executable, "TRAIN": HERE / "train.py", "RECORDS": self.records,
            "RUN": RUN, "NODE_WATCH": NODE_WATCH, "HANG_TIMEOUT": HANG_TIMEOUT,
            "AUTOMATIONS": "on" if self.automations else "off", "KERNEL_LOGS": self.cluster.folder / "faults"}.items())
        self.job = self.cluster.sh("sbatch", "--parsable", f"--chdir={self.out}", f"--export=ALL,{export}",
                                   str(HERE / "job.sbatch"), "--ckpt-every", str(CKPT_EVERY), "--step-seconds",
                                   str(STEP_SECONDS))
        return self.job

    def stop(self) -> None:
        """End the run after a save (lab 2's switch) and let the log watcher read the last lines."""
        (self.out / "STOP").touch()
        until(lambda: not self.queued(), "the job to end after STOP", 300)
        if self.watch is not None:
            time.sleep(5)
            self.watch.terminate()
            self.watch.wait(30)
            self.tooling("watch", str(self.out / "train.log"), "--run", RUN, "--once", "--state",
                         str(self.work / "watch.json"))

    def close(self) -> None:
        """Whatever happened: nothing of the campaign left running or mounted."""
        for process in (self.watch, self.stale):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait(30)
        left = subprocess.run([str(SCRIPT), "stop"], env=self.cluster.env, capture_output=True, text=True)
        subprocess.run(["umount", str(self.out / "fs")], capture_output=True)
        assert left.returncode == 0, f"scripts/slurm-cluster stop left processes running: {left.stderr}"

    def tooling(self, *args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "tooling", "--root", str(self.records), *args],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"tooling {' '.join(args)}: {done.stdout}{done.stderr}"
        return done.stdout

    # --- looking --------------------------------------------------------------------------------
    def queued(self) -> bool:
        """Pending or running (squeue -j fails once SLURM has forgotten the job: MinJobAge)."""
        return bool(self.job) and self.job in self.cluster.sh("squeue", "-h", "-o", "%i").split()

    def running(self) -> bool:
        return self.queued() and self.cluster.job(self.job).get("JobState") == "RUNNING"

    def ready(self) -> bool:
        """Training now (a step in the last few seconds), far enough past its last start that the
        guards have warmed up and a checkpoint is made."""
        timeline = self.timeline.read()
        return timeline.since_start >= READY and time.time() - timeline.last < 5 and self.running()

    def training_time(self) -> float:
        first = self.timeline.read().first
        return 0.0 if first is None else time.time() - first

    def nodes(self) -> list[str]:
        return self.cluster.sh("scontrol", "show", "hostnames", self.cluster.job(self.job)["NodeList"]).split()
