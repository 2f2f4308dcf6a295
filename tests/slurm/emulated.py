"""An emulated SLURM cluster (scripts/slurm-cluster) as the tests drive it, and the installed
health-check hook run as slurmd runs it."""
from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from support import PROJECT

SCRIPT = PROJECT / "scripts" / "slurm-cluster"
HOOK = PROJECT / "scripts" / "slurm" / "health-check"
NODES = ("n1", "n2", "n3", "n4")


def until(condition: Callable[[], object], what: str, seconds: float = 60,
          seen: Callable[[], object] | None = None) -> None:
    """Wait for ``condition``; on timeout, the failure says what ``seen`` shows then (a rare
    failure on a loaded CI machine is read from its log alone)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out waiting for {what}" + (f"; seen: {seen()}" if seen else ""))
        time.sleep(0.2)


@dataclass(frozen=True)
class Cluster:
    dir: Path
    port: int

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CLUSTER_DIR": str(self.dir), "SLURM_CLUSTER_PORT": str(self.port),
                "SLURM_CONF": str(self.dir / "slurm.conf")}

    def script(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(SCRIPT), *args], env=self.env, capture_output=True, text=True, timeout=timeout)

    def sh(self, *cmd: str) -> str:
        return subprocess.run(cmd, env=self.env, check=True, capture_output=True, text=True, timeout=60).stdout.strip()

    def inject(self, node: str, *fault: str) -> None:
        done = self.script("inject", node, *fault)
        assert done.returncode == 0, done.stderr

    def node(self, name: str) -> dict[str, str]:
        """`scontrol show node`'s fields (Reason without the [user@time] SLURM adds)."""
        text = self.sh("scontrol", "show", "node", name)
        fields = dict(re.findall(r"(\w+)=(\S+)", text))
        reason = re.search(r"Reason=(.*?)(?: \[[^\]]*@[^\]]*\])?$", text, re.MULTILINE)
        return {**fields, "Reason": reason[1] if reason else ""}

    def reset(self, *names: str) -> None:
        """The nodes healthy again: their stand-ins, their state and SLURM's (idle)."""
        for name in names:
            self.inject(name, "clear")
            (self.dir / "health" / f"{name}.json").unlink(missing_ok=True)
            if "DRAIN" in self.node(name)["State"]:
                self.sh("scontrol", "update", f"nodename={name}", "state=resume")
        until(lambda: all(self.node(n)["State"] == "IDLE" for n in names), f"{names} idle")

    def leftovers(self) -> list[str]:
        """Processes of this cluster still running: its daemons (by their configuration), whatever
        runs in its folder, its job steps (a slurmstepd or a job's process with its SLURM_CONF)."""
        conf, found = str(self.dir / "slurm.conf"), []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                name = Path(f"/proc/{pid}/comm").read_text().strip()
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
                where = os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                continue
            job = f"SLURM_CONF={conf}".encode() in environ and (
                name == "slurmstepd" or any(v.startswith(b"SLURM_JOB_ID=") for v in environ))
            if f"-f {conf}" in command or (where + "/").startswith(f"{self.dir}/") or job:
                found.append(f"{pid} {name}: {command.strip()}")
        return found


def start(folder: Path, port: int, *args: str) -> Cluster:
    if os.geteuid() != 0:
        pytest.skip("the emulated cluster's daemons run as root (CI runs as root)")
    cluster = Cluster(folder, port)
    started = cluster.script("start", *args)
    assert started.returncode == 0, f"could not start the cluster:\n{started.stdout}{started.stderr}"
    assert started.stdout.strip() == f"export SLURM_CONF={folder}/slurm.conf"
    return cluster


@dataclass(frozen=True)
class Hook:
    """The installed hook (scripts/slurm/health-check) as slurmd runs it, with settings of a
    test's own beside a link to it (records, state, log, stand-ins, paths)."""
    cluster: Cluster
    folder: Path

    @property
    def records(self) -> Path:
        return self.folder / "records"

    @property
    def log(self) -> Path:
        return self.folder / "health-check.log"

    def configure(self, **settings: str) -> None:
        values = {"TOOLING_HEALTH_ROOT": str(self.records), "TOOLING_HEALTH_CLUSTER": "emulated",
                  "TOOLING_HEALTH_STAND_INS": str(self.cluster.dir / "faults"),
                  "TOOLING_HEALTH_STATE": str(self.folder / "state"), "TOOLING_HEALTH_LOG": str(self.log),
                  "TOOLING_HEALTH_SHM": str(self.folder / "shm"),
                  "SLURM_CONF": str(self.cluster.dir / "slurm.conf"), **settings}
        (self.folder / "hooks" / "tooling-health.conf").write_text(
            "".join(f"{name}='{value}'\n" for name, value in values.items()))

    def run(self, node: str, *, context: dict[str, str] | None = None) -> tuple[int, float]:
        """Exit status and seconds, in the environment slurmd gives a HealthCheckProgram: the
        node's name and nothing else, not even PATH (a Prolog: ``context``, SLURM's variables)."""
        started = time.monotonic()
        done = subprocess.run(["/usr/bin/env", "-i", f"SLURMD_NODENAME={node}", *(f"{k}={v}" for k, v in
                                                                                  (context or {}).items()),
                               str(self.folder / "hooks" / "health-check")], timeout=120)
        return done.returncode, time.monotonic() - started

    def incidents(self) -> list[Path]:
        return sorted((self.records / "incidents").glob("INC-*.yaml"))
