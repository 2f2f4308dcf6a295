"""Benchmark: `tooling build` on 1,000 incidents vs a bare `mkdocs build` of the same rendered pages.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_build.py [--incidents N] [--tiny])
Both builds run on the same generated repository in this run. `tooling build` starts from an
empty docs/generated/ each time (validate + analyse + render + mkdocs build); the bare build
gets the markdown it rendered. Target: at most 1.15x. Also prints absolute times and the
site's size per page. The repository is the generated records plus what this project's site
links to (docs, labs, ladders, the stack), so that the strict build passes as it does here.
`--tiny` (20 incidents, 1 repeat) is the smoke test's size: a few seconds, figures not meaningful.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from records import generate

PROJECT = Path(__file__).resolve().parents[2]
NOW = "2026-11-29T12:00:00+00:00"


def prepare(root: Path, incidents: int) -> None:
    """Generated incidents and run, plus the rest of the site as tests/site/site_support.py copies it."""
    generate(root, incidents)  # incidents/ and runbooks/runs/ (the project's own records stay out)
    shutil.copytree(PROJECT / "docs", root / "docs", ignore=shutil.ignore_patterns("generated"))
    shutil.copytree(PROJECT / "labs", root / "labs", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(PROJECT / "runbooks" / "ladders", root / "runbooks" / "ladders")
    shutil.copy(PROJECT / "runbooks" / "stack.yaml", root / "runbooks")
    shutil.copy(PROJECT / "mkdocs.yml", root)
    git = ["git", "-c", "user.name=Bench", "-c", "user.email=bench@test", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "generated records"], check=True)


def timed(command: list[str], root: Path) -> float:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    start = time.perf_counter()
    result = subprocess.run(command, cwd=root, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stderr[-3000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--incidents", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tiny", action="store_true", help="smoke-test size: 20 incidents, 1 repeat")
    args = parser.parse_args()
    if args.tiny:
        args.incidents, args.repeat = 20, 1
    bindir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        prepare(root, args.incidents)
        tool, bare = [], []
        for _ in range(args.repeat):
            shutil.rmtree(root / "docs" / "generated", ignore_errors=True)
            tool.append(timed([str(bindir / "tooling"), "build", "--now", NOW, "--site-dir", "site-tool"], root))
            bare.append(timed([str(bindir / "mkdocs"), "build", "--strict", "--site-dir", "site-bare"], root))
        pages = list((root / "site-bare").rglob("*.html"))
        size = sum(p.stat().st_size for p in pages)
    t, b = statistics.median(tool), statistics.median(bare)
    print(f"build benchmark: {args.incidents} incidents, {len(pages)} HTML pages, median of {args.repeat}")
    print(f"  bare mkdocs build --strict (rendered markdown) : {b:7.2f} s")
    print(f"  tooling build (validate+render+mkdocs, cold)   : {t:7.2f} s")
    print(f"  ratio tooling/bare                             : {t / b:7.2f}x  (target <= 1.15x)")
    print(f"  site size per HTML page                        : {size / len(pages) / 1024:7.1f} KiB")


if __name__ == "__main__":
    main()
