"""Benchmark: `tooling validate` on 10,000 incident files vs a bare libyaml load of the same files.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_validate.py [--files N])
Prints the ratio; the target is at most 1.2x. Both are measured in this run, on this machine.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

SEVERITIES = ["sev1", "sev2", "sev3", "sev4"]
SYMPTOMS = ["nan", "hang", "divergence", "crash", "slowdown", "data", "infra", "checkpoint"]
LAYERS = ["gpu-hardware", "nccl", "storage", "scheduler", "model-code", "driver", "host"]

RUN = """kind: run
id: bench-run
title: Benchmark run
owner: alice
state: running
updated_at: 2026-11-28T09:00:00+00:00
"""

INCIDENT = """# yaml-language-server: $schema=../tooling/schemas/incident.schema.json
kind: incident
id: INC-{n:05d}
title: NCCL timeout in all-reduce on node{node:03d} at step {step}
run: bench-run
status: resolved
severity: {severity}
symptom: {symptom}
layer: {layer}
signatures:
  - NCCL WARN Timeout at work {work} on node{node:03d}
  - "Watchdog caught collective operation timeout: WorkNCCL(SeqNum={work}, OpType=ALLREDUCE)"
nodes: [node{node:03d}]
ranks: [{rank}, {rank2}]
reported_by: alice
detected_at: 2026-10-{day:02d}T0{hour}:14:00+00:00
mitigated_at: 2026-10-{day:02d}T0{hour}:40:00+00:00
resolved_at: 2026-10-{day:02d}T1{hour}:00:00+00:00
timeline:
  - at: 2026-10-{day:02d}T0{hour}:14:00+00:00
    event: Throughput alert; all ranks stuck in the same all-reduce except rank {rank}
  - at: 2026-10-{day:02d}T0{hour}:30:00+00:00
    event: py-spy dump on all ranks; rank {rank} in a data loader read
  - at: 2026-10-{day:02d}T0{hour}:40:00+00:00
    event: Drained node{node:03d}, restarted from the last checkpoint on a spare
impact:
  gpu_hours_lost: {gpu_hours}
  steps_lost: {steps_lost}
actions:
  - Drained node{node:03d}
  - Restarted from step {step}
root_cause: A stalled NFS read on one node held its rank outside the collective.
links:
  - title: logs
    url: https://logs.example.org/run/{n}
tags: [nccl, hang]
"""


def generate(root: Path, count: int) -> list[Path]:
    (root / "runbooks" / "runs").mkdir(parents=True)
    (root / "runbooks" / "runs" / "bench-run.yaml").write_text(RUN)
    incidents = root / "incidents"
    incidents.mkdir()
    paths = []
    for n in range(1, count + 1):
        path = incidents / f"INC-{n:05d}.yaml"
        path.write_text(INCIDENT.format(
            n=n, node=n % 256, step=n * 100, severity=SEVERITIES[n % 4], symptom=SYMPTOMS[n % 8],
            layer=LAYERS[n % 7], work=n * 7, rank=n % 512, rank2=(n + 1) % 512, day=n % 28 + 1,
            hour=n % 9, gpu_hours=n % 300, steps_lost=n % 1000))
        paths.append(path)
    return paths


def bare_load(paths: list[Path]) -> float:
    """The floor: read each file whole and hand it to libyaml (faster than passing the handle)."""
    start = time.perf_counter()
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            yaml.load(handle.read(), Loader=yaml.CSafeLoader)
    return time.perf_counter() - start


def tooling_validate(root: Path) -> float:
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "tooling", "validate", "--strict"], cwd=root,
                            capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"validate failed:\n{result.stdout[:2000]}{result.stderr[:2000]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = generate(root, args.files)
        bare_load(paths)  # warm the page cache for both contenders
        bare = [bare_load(paths) for _ in range(args.repeat)]
        tool = [tooling_validate(root) for _ in range(args.repeat)]
    b, t = statistics.median(bare), statistics.median(tool)
    print(f"validate benchmark: {args.files} incident files, median of {args.repeat}")
    print(f"  bare yaml.load(CSafeLoader), 1 process : {b:7.3f} s  ({b / args.files * 1e6:6.1f} us/file)")
    print(f"  tooling validate --strict (whole CLI)  : {t:7.3f} s  ({t / args.files * 1e6:6.1f} us/file)")
    print(f"  ratio tooling/bare                     : {t / b:7.2f}x  (target <= 1.20x)")


if __name__ == "__main__":
    main()
