"""Benchmark: the whole `tooling repeats --json` over 10,000 and 100,000 incident files.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_repeats_command.py [--sizes N,N] [--tiny])
bench_repeats.py times the grouping of records already in memory; this times what a person
waits for: reading and validating every file, the analysis, the output. Each size runs cold
(TOOLING_NO_CACHE=1: every file read and checked), warm (validate's checks kept from the
run before: tooling/rules/kept.py) and warm after one incident was edited (what a person waits
for after filing one: that file checked again, the whole analysis made again), against a bare libyaml load of the same files in one
process, all measured in this run, with the load average and the CPU time (on a shared machine
it moves less than the wall time). Target: 100,000 under 10 s. The incidents are
bench_repeats.py's (ten failures, many families each). `--tiny` (500 and 2,000) is the smoke
test's size: figures not meaningful.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from bench_repeats import generate
from records import RUN

PROJECT = Path(__file__).resolve().parents[2]
NOW = "2026-11-29T12:00:00+00:00"


def write_repository(root: Path, count: int) -> list[Path]:
    (root / "runbooks" / "runs").mkdir(parents=True)
    (root / "runbooks" / "runs" / "bench.yaml").write_text(RUN.replace("bench-run", "bench"))
    (root / "incidents").mkdir()
    paths = []
    for record in generate(count):
        data = {**record.data, "resolved_at": record.data["detected_at"]}
        path = root / record.path
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
        os.utime(path, (time.time() - 60,) * 2)  # settled: a check kept by the first warm run is reused
        paths.append(path)
    return paths


def bare_load(paths: list[Path]) -> float:
    start = time.perf_counter()
    for path in paths:
        yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    return time.perf_counter() - start


def repeats(root: Path, cache: Path, *, cold: bool) -> tuple[float, float]:
    """Wall and CPU seconds (its worker processes included) of tooling repeats --json."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), **({"TOOLING_NO_CACHE": "1"} if cold else {})}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "tooling", "--root", str(root), "--now", NOW, "repeats", "--json"],
                            cwd=PROJECT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"tooling repeats failed:\n{result.stderr[-3000:]}")
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000", help="incident counts (default: 10,000 and 100,000)")
    parser.add_argument("--tiny", action="store_true", help="smoke-test size: 500 and 2,000 incidents")
    args = parser.parse_args()
    sizes = [500, 2_000] if args.tiny else [int(n) for n in args.sizes.split(",")]
    print(f"tooling repeats --json benchmark, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    # one cache for every size: Hyperscan's databases and the catalogue's mark are the same for all
    # (compiled once, by the first size's warm-up run); the kept checks go by each repository's path
    with tempfile.TemporaryDirectory() as cached:
        for count in sizes:
            figures(count, Path(cached))
    print(f"  load average now {os.getloadavg()[0]:.1f}")


def figures(count: int, cache: Path) -> None:
    """One size's line: cold and warm runs (each after a run of its own that is not timed)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        paths = write_repository(root, count)
        bare = bare_load(paths)
        repeats(root, cache, cold=True)  # the first size's compiles Hyperscan's databases into the cache
        cold = repeats(root, cache, cold=True)
        repeats(root, cache, cold=False)  # keeps the checks
        warm = repeats(root, cache, cold=False)
        edit(paths[len(paths) // 2])  # what a person does between two runs: one incident filed or edited
        edited = repeats(root, cache, cold=False)
    print(f"  {count:>7,} incidents: bare libyaml load {bare:6.2f} s; tooling repeats cold {cold[0]:6.2f} s "
          f"({cold[1]:.1f} s CPU) -> {cold[0] / bare:.2f}x the load; warm {warm[0]:6.2f} s ({warm[1]:.1f} s CPU) "
          f"-> {warm[0] / bare:.2f}x the load{'' if warm[0] < 10 else ' (target: under 10 s)'}; "
          f"warm with one incident edited {edited[0]:6.2f} s ({edited[1]:.1f} s CPU) -> {edited[0] / bare:.2f}x the load")


def edit(path: Path) -> None:
    """One incident's title changed, as `tooling set` would leave it (settled, so only it is read again)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["title"] += " (edited)"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    os.utime(path, (time.time() - 60,) * 2)


if __name__ == "__main__":
    main()
