"""Self-check of lab 4: for each choice of hung rank among 4, `tooling stacks` names exactly
that rank. Each hang is ended by this check (every rank, then torchrun, is killed) and the check
makes sure nothing is left running; every wait is bounded.

Run: python labs/04-hung-rank/check.py
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

from tooling.diagnose.ranks import children, environ

TRAIN = Path(__file__).with_name("train.py")
RANKS, HANG_STEP = 4, 15


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


def main() -> int:
    for hung in range(RANKS):
        frame = check(hung)
        print(f"hung rank {hung}: tooling stacks named rank {hung}, stuck in {frame}")
    print("lab 4 self-check: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
