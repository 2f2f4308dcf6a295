"""Smoke test of every benchmark: each runs as `./dev bench` runs it, at its tiny size, so that none rots.

Only that it runs to the end and prints its figures is checked, never how fast anything was: the
figures of a tiny run mean nothing, and timings belong to `./dev bench`, not to the suite.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from support import PROJECT

BENCHES = sorted((PROJECT / "tests" / "bench").glob("bench_*.py"))
RATIO = re.compile(r"\d+\.\d+x\b")  # a figure line: "ratio tooling/bare : 1.23x", "-> 1.05x plain"


def test_every_benchmark_is_found() -> None:
    names = {b.name for b in BENCHES}
    assert {"bench_build.py", "bench_validate.py", "bench_repeats.py", "bench_checkpoint.py",
            "bench_loss_spike.py", "bench_writes.py"} <= names


@pytest.mark.parametrize("bench", BENCHES, ids=[b.stem for b in BENCHES])
def test_benchmark_runs_at_its_tiny_size(bench: Path) -> None:
    # A script without the option would ignore it and run at full size (minutes): say so instead.
    assert "--tiny" in bench.read_text(), f"{bench.name} has no --tiny option for this smoke test"
    # a safety net, not a speed check: the swap's SLURM cluster took over 300 s on four busy workers
    result = subprocess.run([sys.executable, str(bench), "--tiny"], cwd=PROJECT, capture_output=True,
                            text=True, timeout=600, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    figures = [line for line in result.stdout.splitlines() if RATIO.search(line)]
    assert figures, f"{bench.name} printed no ratio:\n{result.stdout}"
