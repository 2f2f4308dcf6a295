"""Benchmark: `tooling validate` on 10,000 incident files vs a bare libyaml load of the same files.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_validate.py [--files N] [--tiny])
Prints the ratio; the target is at most 1.2x. Both are measured in this run, on this machine.
`--tiny` (200 files, 1 repeat) is the smoke test's size: a few seconds, figures not meaningful.
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

from records import generate


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
    parser.add_argument("--tiny", action="store_true", help="smoke-test size: 200 files, 1 repeat")
    args = parser.parse_args()
    if args.tiny:
        args.files, args.repeat = 200, 1
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
