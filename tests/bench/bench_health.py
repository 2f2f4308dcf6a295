"""Benchmark of `tooling health-check` on a healthy node, as slurmd runs it (a fresh process each
time): the goal is under 2 s, the Prolog's cost at every job start and the HealthCheckProgram's
at every interval.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_health.py [--repeat N] [--tiny])
Measured in this run, in rounds that take each command in turn (a slow moment of the machine hits
them all), the median of each:
- baselines: `python -c pass` (the interpreter starting) and `dmesg` (the cheapest source read);
- an emulated node of scripts/slurm-cluster: its stand-ins, two folders whose room is checked,
  filing and draining on (--cluster, --drain): what the cluster's hook runs;
- this machine's own sources: dmesg, and nvidia-smi where it is installed.
Printed as seconds and as ratios to `python -c pass`, never asserted; each healthy run is checked
to have exited 0 and written nothing. --tiny (2 rounds) is the smoke test's size.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
GOAL = 2.0  # seconds


def files(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--tiny", action="store_true")
    args = parser.parse_args()
    rounds = 2 if args.tiny else args.repeat
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        (root / "faults" / "n1").mkdir(parents=True)
        env = {**os.environ, "SLURM_CLUSTER_DIR": str(root)}
        subprocess.run([str(PROJECT / "scripts" / "slurm-cluster"), "inject", "n1", "clear"], check=True, env=env)
        for folder in ("records", "checkpoints", "logs", "state", "shm"):
            (root / folder).mkdir()
        (root / "records" / "mkdocs.yml").write_text("site_name: bench\n")
        tooling = [sys.executable, "-m", "tooling", "--root", str(root / "records"), "health-check", "--node", "n1",
                   "--shm", str(root / "shm"), "--state", str(root / "state" / "n1.json")]
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "dmesg": ["dmesg"],
            "health-check, emulated node": [*tooling, "--stand-ins", str(root / "faults" / "n1"), "--cluster",
                                            "emulated", "--drain", "--path", str(root / "checkpoints"),
                                            "--path", str(root / "logs")],
            "health-check, this machine": tooling,
        }
        before = files(root)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(rounds):
            for name, command in commands.items():
                times[name].append(timed(command, env))
        assert files(root) == before, "a healthy check wrote something"
    median = {name: statistics.median(values) for name, values in times.items()}
    bare = median["python -c pass"]
    print(f"health-check benchmark: a healthy node, median of {rounds} rounds, a fresh process each")
    for name, value in median.items():
        print(f"  {name:<30}: {value:7.3f} s  ({value / bare:6.2f}x python -c pass)")
    slowest = max(median["health-check, emulated node"], median["health-check, this machine"])
    print(f"  {'slowest health-check / goal':<30}: {slowest / GOAL:7.2f}x  (goal: under {GOAL:g} s, <= 1.00x)")


if __name__ == "__main__":
    main()
