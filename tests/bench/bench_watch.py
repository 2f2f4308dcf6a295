"""Benchmark: `tooling watch` following a training log that grows at 50 MB/s, against `tail -F`.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_watch.py [--seconds S] [--rate MB/s] [--tiny])
A writer process appends realistic training-log lines (the scan benchmark's generator: step lines,
NCCL INFO chatter, a failure every 100,000 lines) at the target rate for some seconds, in whole
lines, while `tooling watch LOG --json` (recognising, filing incidents and occurrences, saving its
offsets after every poll) and `tail -F LOG > /dev/null` (reading, nothing else) follow the same
file, started together in this run. Each reader's position is sampled as the log grows (watch's
from its offset file, tail's from /proc/PID/fdinfo); printed: the rate each sustained (bytes over
the time from the writer's start until it had read them all) as a ratio to the target and to
`tail -F`, the largest backlog each had, the lag left when the writer stopped, and watch's peak RSS.
`--tiny` (1 s at 5 MB/s) is the smoke test's size: figures not meaningful.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench_scan import NOW, PROJECT, write_log

WRITES = 1 << 20  # bytes per write of the writer, cut back to the last whole line
SAMPLE = 0.02  # seconds between samples of the readers' positions
CATCH_UP = 60.0  # seconds a reader may take to catch up once the writer stopped

WRITER = """
import os, sys, time
log, block_path, rate, seconds, size = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
block = open(block_path, "rb").read()
pieces, start = [], 0
while start < len(block):
    end = block.rfind(b"\\n", start, start + size) + 1 or min(len(block), start + size)
    pieces.append(block[start:end])
    start = end
total, begin = 0, time.monotonic()
with open(log, "ab", buffering=0) as out:
    while total < rate * seconds:
        for piece in pieces:
            due = begin + total / rate
            if due > time.monotonic():
                time.sleep(due - time.monotonic())
            out.write(piece)
            total += len(piece)
            if total >= rate * seconds:
                break
time.sleep(max(0.0, begin + total / rate - time.monotonic()))  # the end of the last write's time slot
print(total, begin, time.monotonic())  # CLOCK_MONOTONIC: the same clock in every process
"""


@dataclass
class Reader:
    name: str
    process: subprocess.Popen[bytes]
    position: float = 0.0
    done_at: float | None = None  # when it had read everything the writer wrote
    backlog: int = 0  # the most bytes it was behind
    rss_kib: int = 0
    samples: list[tuple[float, int]] = field(default_factory=list)


def tail_position(pid: int, log: Path) -> int:
    """Where tail's descriptor of the log is, from /proc (0 until it opened it)."""
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            if os.readlink(f"/proc/{pid}/fd/{fd}") == str(log):
                with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                    return int(info.readline().split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return 0


def watch_position(state: Path, log: Path) -> int:
    """The offset `tooling watch` saved for the log (0 before its first poll)."""
    try:
        files = json.loads(state.read_text())["logs"][str(log)]["files"]
    except (FileNotFoundError, json.JSONDecodeError, KeyError):
        return 0
    return files[-1]["offset"] if files else 0


def repository(folder: Path) -> Path:
    root = folder / "repo"
    root.mkdir()
    for name in ("incidents", "runbooks"):
        shutil.copytree(PROJECT / "tests" / "corpus" / name, root / name)
    (root / "mkdocs.yml").write_text("site_name: bench\n")
    return root


def run(seconds: float, rate: float, block_bytes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        root, log, state, block = repository(folder), folder / "train.log", folder / "offsets.json", folder / "block"
        lines, failures = write_log(block, block_bytes)
        log.touch()
        events = open(folder / "events", "wb")
        watch = Reader("tooling watch", subprocess.Popen(
            [sys.executable, "-m", "tooling", "--now", NOW, "watch", str(log), "--run", "demo-7b", "--json",
             "--interval", "0.05", "--state", str(state)], cwd=root, stdout=events, stderr=subprocess.DEVNULL))
        tail = Reader("tail -F", subprocess.Popen(["tail", "-F", "-c", "+1", str(log)], stdout=subprocess.DEVNULL,
                                                  stderr=subprocess.DEVNULL))
        time.sleep(1.0)  # both started and following before the first byte
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(log), str(block), str(rate * 1e6), str(seconds),
                                   str(WRITES)], stdout=subprocess.PIPE)
        follow(writer, log, state, [watch, tail])
        written, start, ended = (float(v) for v in writer.communicate()[0].split())
        for reader in (watch, tail):
            reader.process.send_signal(signal.SIGTERM)
            _, _, usage = os.wait4(reader.process.pid, 0)
            reader.rss_kib = usage.ru_maxrss
        events.close()
        outcomes = [json.loads(line) for line in (folder / "events").read_text().splitlines()]
        report(seconds=seconds, rate=rate, size=int(written), start=start, ended=ended, watch=watch, tail=tail,
               block=(lines, failures, block_bytes), outcomes=outcomes)


def follow(writer: subprocess.Popen[bytes], log: Path, state: Path, readers: list[Reader]) -> None:
    """Sample the readers until the writer stopped and each read everything (or CATCH_UP passed)."""
    stopped_at = None
    while True:
        now = time.monotonic()
        size = log.stat().st_size
        if stopped_at is None and writer.poll() is not None:
            stopped_at, size = now, log.stat().st_size
        for reader in readers:
            where = watch_position(state, log) if reader.name == "tooling watch" else tail_position(reader.process.pid, log)
            reader.samples.append((now, where))
            reader.backlog = max(reader.backlog, size - where)
            if stopped_at is not None and reader.done_at is None and where >= size:
                reader.done_at = now
        if stopped_at is not None and (all(r.done_at for r in readers) or now - stopped_at > CATCH_UP):
            return
        time.sleep(SAMPLE)


def report(*, seconds: float, rate: float, size: int, start: float, ended: float, watch: Reader, tail: Reader,
           block: tuple[int, int, int], outcomes: list[dict]) -> None:
    lines, failures, block_bytes = block
    print(f"watch benchmark: a writer appends realistic training-log lines at {rate:g} MB/s for {seconds:g} s "
          f"({size / 1e6:.0f} MB; a {block_bytes / 1e6:.0f} MB block of {lines:,} lines with {failures} failure "
          "lines, written again and again)")
    sustained = {}
    for reader in (tail, watch):
        if reader.done_at is None:
            print(f"  {reader.name:<15}: did not catch up within {CATCH_UP:g} s of the writer's end "
                  f"({reader.samples[-1][1] / 1e6:.0f} of {size / 1e6:.0f} MB read)")
            sustained[reader.name] = reader.samples[-1][1] / (reader.samples[-1][0] - start) / 1e6
            continue
        sustained[reader.name] = size / (max(reader.done_at, ended) - start) / 1e6
        print(f"  {reader.name:<15}: {sustained[reader.name]:6.1f} MB/s sustained, largest backlog "
              f"{reader.backlog / 1e6:6.1f} MB, lag at the end {max(0.0, reader.done_at - ended):5.2f} s")
    created = sum(1 for o in outcomes if o["action"] == "created")
    print(f"  tooling watch filed {created} incidents and {len(outcomes) - created} occurrence updates on the way")
    print(f"  ratio watch/target ({rate:g} MB/s)    : {sustained['tooling watch'] / rate:5.2f}x  (1.00x: read as fast "
          "as written; the lag at the end is what it trailed by)")
    print(f"  ratio watch/tail -F (same run)  : {sustained['tooling watch'] / sustained['tail -F']:5.2f}x")
    print(f"  tooling watch peak RSS          : {watch.rss_kib / 1024:6.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the writer writes (default: 10)")
    parser.add_argument("--rate", type=float, default=50.0, help="MB per second it writes (default: 50)")
    parser.add_argument("--tiny", action="store_true", help="smoke-test size: 1 s at 5 MB/s")
    args = parser.parse_args()
    if args.tiny:
        run(1.0, 5.0, 2_000_000)
    else:
        run(args.seconds, args.rate, 32_000_000)


if __name__ == "__main__":
    main()
