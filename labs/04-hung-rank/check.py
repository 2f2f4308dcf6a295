"""Self-check of lab 4: for each choice of hung rank among 4, `tooling stacks` names exactly
that rank. Each hang is ended by this check (every rank, then torchrun, is killed) and the check
makes sure nothing is left running; every wait is bounded.

With --watchdog, the watchdog's variant instead: under `tooling watchdog`, a hung rank is found,
named and the job ended by the watchdog alone (exit 75, a hang incident that validates, nothing
left running), and a healthy run ends with exit 0 and leaves no dumps. Each runs in a scratch
repository, so the check files nothing in yours.

Run: python labs/04-hung-rank/check.py [--watchdog]
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tooling.diagnose.rank_dumps import children, environ

TRAIN = Path(__file__).with_name("train.py")
RANKS, HANG_STEP = 4, 15
WATCHDOG_TIMEOUT = 20  # seconds without a beat; steps take milliseconds, even on 2 loaded cores


def wait_until_hung(progress: Path, hung: int, process: subprocess.Popen[bytes], timeout: float = 120) -> None:
    """Every rank has reached the hang step: the hung rank sleeps, the others sit in all-reduce."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, "torchrun exited before the hang"
        steps = [int(p.read_text() or -1) for p in progress.glob("rank*") if p.read_text()]
        if len(steps) == RANKS and min(steps) >= HANG_STEP:
            time.sleep(1.0)  # let the waiting ranks enter the collective
            return
        time.sleep(0.1)
    raise AssertionError(f"rank {hung} never hung")


def still_running(progress: str) -> list[int]:
    """Live processes of the run (a zombie's environment cannot be read, so zombies never count)."""
    return [int(p.name) for p in Path("/proc").iterdir()
            if p.name.isdigit() and environ(int(p.name)).get("HANG_PROGRESS") == progress]


def end_hang(torchrun: subprocess.Popen[bytes], progress: str) -> None:
    """Kill every rank, then torchrun. Each rank runs in a session of its own, so killing
    torchrun's process group alone would leave the hung rank asleep for an hour."""
    for pid in children(torchrun.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    os.killpg(torchrun.pid, signal.SIGKILL)
    torchrun.wait(timeout=30)
    deadline = time.monotonic() + 10
    while (left := still_running(progress)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"processes of the hung job still running: {left}"


def check(hung: int) -> str:
    with tempfile.TemporaryDirectory() as progress:
        env = {**os.environ, "HANG_RANK": str(hung), "HANG_STEP": str(HANG_STEP), "HANG_TIMEOUT": "120",
               "HANG_PROGRESS": progress, "OMP_NUM_THREADS": "1"}
        torchrun = subprocess.Popen([sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={RANKS}",
                                     "--standalone", str(TRAIN)], env=env, start_new_session=True,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_until_hung(Path(progress), hung, torchrun)
            result = subprocess.run([sys.executable, "-m", "tooling", "stacks", "--pid", str(torchrun.pid), "--json"],
                                    capture_output=True, text=True, timeout=60)
            assert result.returncode == 0, result.stderr
            report = json.loads(result.stdout)
            named = [o["rank"] for o in report["outliers"]]
            assert named == [str(hung)], f"hung rank {hung}, but tooling stacks named {named}: {result.stdout}"
            if hung == RANKS - 1:  # show the grouped stacks once, as a person would see them
                text = subprocess.run([sys.executable, "-m", "tooling", "stacks", "--pid", str(torchrun.pid)],
                                      capture_output=True, text=True, timeout=60)
                print(text.stdout.rstrip())
            return report["outliers"][0]["frame"]
        finally:
            end_hang(torchrun, progress)


def scratch_repository(folder: Path) -> Path:
    """A repository of records with one run, lab4, for the watchdog's incident."""
    (folder / "mkdocs.yml").write_text("site_name: lab 4 scratch\n")
    made = subprocess.run([sys.executable, "-m", "tooling", "new-run", "lab4"], cwd=folder, capture_output=True,
                          text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    return folder


def under_watchdog(repo: Path, hung: int, steps: int) -> subprocess.CompletedProcess[str]:
    """Lab 4 under `tooling watchdog` (hung=-1: no rank hangs), every process marked by LAB4_CHECK."""
    env = {**os.environ, "HANG_RANK": str(hung), "HANG_STEP": str(HANG_STEP), "HANG_STEPS": str(steps),
           "HANG_TIMEOUT": "600", "OMP_NUM_THREADS": "1", "LAB4_CHECK": str(repo)}
    job = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={RANKS}", "--standalone", str(TRAIN),
           "--watchdog"]
    return subprocess.run([sys.executable, "-m", "tooling", "watchdog", "--run", "lab4", "--timeout",
                           str(WATCHDOG_TIMEOUT), "--startup-timeout", "300", "--", *job],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=600)


def left_running(marker: str) -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir()
            if p.name.isdigit() and environ(int(p.name)).get("LAB4_CHECK") == marker]


def check_watchdog(hung: int) -> str:
    with tempfile.TemporaryDirectory() as scratch:
        repo = scratch_repository(Path(scratch))
        result = under_watchdog(repo, hung, 10_000)
        assert result.returncode == 75, f"expected exit 75 (hang), got {result.returncode}: {result.stderr}"
        assert not left_running(str(repo)), f"processes of the job still running: {left_running(str(repo))}"
        summary = next(repo.glob("incidents/dumps/hang-*/watchdog.txt")).read_text()
        assert f"outlier: rank {hung}," in summary, summary
        incident = next(repo.glob("incidents/INC-*.yaml")).read_text()
        assert f"ranks:\n  - {hung}\n" in incident, incident
        valid = subprocess.run([sys.executable, "-m", "tooling", "validate", "--strict"], cwd=repo,
                               capture_output=True, text=True, timeout=120)
        assert valid.returncode == 0, valid.stdout + valid.stderr
        healthy = under_watchdog(repo, -1, 200)
        assert healthy.returncode == 0, f"a healthy run under the watchdog exited {healthy.returncode}: {healthy.stderr}"
        assert len(list(repo.glob("incidents/dumps/hang-*"))) == 1, "a healthy run left dumps"
        assert not left_running(str(repo))
        return summary


def main() -> int:
    if sys.argv[1:] == ["--watchdog"]:
        print(check_watchdog(RANKS - 1).rstrip())
        print(f"hung rank {RANKS - 1}: the watchdog named it and ended the job with exit 75; "
              "a healthy run under it exited 0 and left no dumps")
        print("lab 4 self-check (watchdog): passed")
        return 0
    for hung in range(RANKS):
        frame = check(hung)
        print(f"hung rank {hung}: tooling stacks named rank {hung}, stuck in {frame}")
    print("lab 4 self-check: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
