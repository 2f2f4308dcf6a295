"""Benchmark: how long an edit takes to reach the browser under `tooling serve`, in a wiki of 15
incidents and in one of 1,000, side by side.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_serve.py [--small N] [--large N] [--edits E] [--tiny])
Each repository is the build benchmark's (generated incidents plus the rest of this project's
site, committed). The real `tooling serve` is started on it, on a free port, and waited for until
it serves the page of the middle incident. Then, E times: that incident's root cause is rewritten
(a new word each time, written in place as an editor saves) and the clock runs until the page,
fetched over HTTP as a browser reloading it would, shows the new word; the same for the page's
Korean edition. The server is given a moment between edits to finish what the edit left it
(pages that list the incident). Printed: the median edit-to-browser time at each size, English
and Korean, and their ratio (goal: at most 2x). The startup build is printed too, for scale.
`--tiny` (3 and 6 incidents, 1 edit) is the smoke test's size: figures not meaningful.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from bench_build import prepare

POLL = 0.05  # seconds between fetches of the edited page
SETTLE = 3.0  # seconds the server gets after an edit shows, for the pages that list the incident
ROOT_CAUSE = re.compile(r"^root_cause: .*$", re.M)


@dataclass
class Served:
    incidents: int
    startup: float
    english: list[float]
    korean: list[float]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fetch(url: str) -> str | None:
    """The page's text, or None while the server is not answering it (yet)."""
    try:
        with urllib.request.urlopen(url, timeout=600) as response:
            return response.read().decode("utf-8")
    except (OSError, urllib.error.URLError):
        return None


def wait_for(url: str, word: str, deadline: float, log: Path) -> float:
    """Fetch ``url`` until it contains ``word``; the time it first did."""
    while time.monotonic() < deadline:
        text = fetch(url)
        if text is not None and word in text:
            return time.monotonic()
        time.sleep(POLL)
    raise SystemExit(f"{url} never showed {word!r}; tooling serve said:\n{log.read_text()[-3000:]}")


def serve_and_edit(root: Path, incidents: int, edits: int, log: Path) -> Served:
    port = free_port()
    record = root / "incidents" / f"INC-{incidents // 2 + 1:05d}.yaml"
    page = f"generated/incidents/{record.stem}/"
    english, korean = f"http://127.0.0.1:{port}/{page}", f"http://127.0.0.1:{port}/ko/{page}"
    bindir = Path(sys.executable).parent
    with log.open("wb") as stderr:
        server = subprocess.Popen([str(bindir / "tooling"), "serve", "--dev-addr", f"127.0.0.1:{port}"], cwd=root,
                                  stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True,
                                  env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    try:
        start = time.monotonic()
        wait_for(english, record.stem, start + 1800, log)
        served = Served(incidents, time.monotonic() - start, [], [])
        for n in range(edits):
            word = f"edited{n}x{os.getpid()}"
            text = record.read_text(encoding="utf-8")
            with record.open("w", encoding="utf-8") as out:  # in place, as an editor saves
                out.write(ROOT_CAUSE.sub(f"root_cause: The root cause, {word}.", text))
            saved = time.monotonic()
            served.english.append(wait_for(english, word, saved + 1800, log) - saved)
            served.korean.append(wait_for(korean, word, saved + 1800, log) - saved)
            if n + 1 < edits:
                time.sleep(SETTLE)
        return served
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", type=int, default=15)
    parser.add_argument("--large", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=3)
    parser.add_argument("--tiny", action="store_true", help="smoke-test size: 3 and 6 incidents, 1 edit")
    args = parser.parse_args()
    if args.tiny:
        args.small, args.large, args.edits = 3, 6, 1
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for incidents in (args.small, args.large):
            root = Path(tmp) / str(incidents)
            prepare(root, incidents)
            results.append(serve_and_edit(root, incidents, args.edits, Path(tmp) / f"serve-{incidents}.log"))
    small, large = results
    print(f"serve benchmark: one incident's root cause edited {args.edits} time(s); time until the served page "
          f"shows it (median)")
    for served in results:
        print(f"  {served.incidents:5d} incidents: English {statistics.median(served.english):7.2f} s, Korean "
              f"{statistics.median(served.korean):7.2f} s   (first build {served.startup:6.1f} s)")
    ratio = statistics.median(large.english) / statistics.median(small.english)
    korean = statistics.median(large.korean) / statistics.median(small.korean)
    print(f"  ratio {large.incidents}/{small.incidents} incidents, English : {ratio:7.2f}x  (goal <= 2x)")
    print(f"  ratio {large.incidents}/{small.incidents} incidents, Korean  : {korean:7.2f}x  (goal <= 2x)")


if __name__ == "__main__":
    main()
