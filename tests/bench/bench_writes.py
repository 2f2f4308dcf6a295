"""Benchmark: a reporter write and a watch poll that files one failure, in a small and a large repository.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_writes.py [--size N] [--tiny])
Two repositories of generated incidents (tests/bench/records.py), of 15 and of --size (default
10,000), each with the run page bench-run carrying the fullest feed a reporter keeps. In each:
- a reporter write: RunReporter's writer process (python -m tooling.writers.feed_server), one
  step written and flushed, timed from the training process as bench_reporter.py times it (the
  median of the writes after the first, which also starts the writer);
- a watch poll that files one failure: the poll of `tooling watch` (its Watcher, in this process,
  following a log one Xid 79 line longer at each poll), timed whole: reading the log, filing the
  failure, saving the offsets. "occurrence": the failure's incident is open, one more occurrence is
  written to it; "new incident": the incident of the poll before was resolved meanwhile (by
  `tooling set`, not timed), a new one is filed. The watch's first poll, which reads every incident
  once, is printed apart.
Each figure of the large repository is printed beside the small one's, as their ratio (1.00x: the
write costs the same whatever the repository holds). --tiny (15 and 200 incidents, 3 rounds) runs
in seconds, for a smoke test of this script.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

from records import full_feed, generate
from tooling.records.layout import path_of
from tooling.resilience import RunReporter
from tooling.rules.others import Repository
from tooling.watch import state as offsets
from tooling.watch.known import RACY
from tooling.watch.watcher import StallRule, Watcher
from tooling.writers.edit import edited_text, parse_assignment, rewrite

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
RUN = "bench-run"


def repository(root: Path, incidents: int) -> Path:
    generate(root, incidents)
    full_feed(root / "runbooks" / "runs" / f"{RUN}.yaml", now=datetime.now(timezone.utc))  # the reporter's clock
    (root / "mkdocs.yml").write_text("site_name: bench\n")
    time.sleep(RACY)  # files changed this recently are read again at each poll: let them age, as a repository has
    return root


def reporter_write(root: Path, writes: int) -> float:
    """Seconds one write takes, flushed from the training process (median after the first)."""
    reporter = RunReporter(RUN, root=root, every=3600)
    took = []
    for step in range(1, writes + 2):
        reporter.step(step, loss=2.0, tokens=step * 1000)
        start = time.perf_counter()
        reporter.flush()
        took.append(time.perf_counter() - start)
    reporter.close()
    return statistics.median(took[1:])


def xid(k: int) -> str:
    """The k-th Xid 79 of one GPU, 2 minutes (of uptime) after the one before: a failure again."""
    return (f"[{812345.678934 + 120 * k:.6f}] NVRM: Xid (PCI:0000:ca:00): 79, pid=4242, name=python3, "
            "GPU has fallen off the bus.\n")


def watch_polls(root: Path, folder: Path, rounds: int) -> tuple[float, list[float], list[float]]:
    """Seconds of the first poll, then of each poll adding an occurrence, and of each filing a new incident."""
    log, state_path, filed = folder / "train.log", folder / "offsets.json", []
    log.write_text("")
    clock = time.monotonic()
    watcher = Watcher(root=root, logs=[log], where={"run": RUN, "extra": {}}, state=offsets.load(state_path, RUN),
                      rule=StallRule(root, RUN, None), clock=lambda: NOW + timedelta(seconds=time.monotonic() - clock),
                      emit=filed.append, once=True)
    k = 0

    def poll(then: Callable[[], None] = lambda: None) -> float:
        nonlocal k
        with open(log, "a") as handle:
            handle.write(xid(k))
        k += 1
        start = time.perf_counter()
        watcher.poll(state_path)
        took = time.perf_counter() - start
        then()
        return took

    first = poll()
    occurrences = [poll() for _ in range(rounds)]

    def resolve() -> None:  # as `tooling set INC status=resolved resolved_at=...` would
        assignments = [parse_assignment("status=resolved"), parse_assignment(f"resolved_at={(NOW + timedelta(hours=1)).isoformat()}")]
        rewrite(path_of(root, filed[-1].incident), lambda text: edited_text(text, assignments, now=NOW),
                universe=Repository(root), now=NOW + timedelta(hours=1), warnings=False)

    poll(resolve)  # one more occurrence, then the incident is resolved: the next failure is a new one
    created = [poll(resolve) for _ in range(rounds)]
    assert [o.action for o in filed] == ["created"] + ["occurrence"] * (rounds + 1) + ["created"] * rounds, \
        [o.action for o in filed]
    watcher.close()
    return first, occurrences, created


def measure(incidents: int, rounds: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix=f"bench-writes-{incidents}-") as tmp:
        folder = Path(tmp)
        root = repository(folder / "repo", incidents)
        write = reporter_write(root, rounds)
        first, occurrences, created = watch_polls(root, folder, rounds)
    return {"write": write, "first": first, "occurrence": statistics.median(occurrences),
            "created": statistics.median(created)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="incidents of the large repository (default 10,000)")
    parser.add_argument("--rounds", type=int, default=9, help="writes and polls of each kind (default 9)")
    parser.add_argument("--tiny", action="store_true", help="15 and 200 incidents, 3 rounds: a smoke test in seconds")
    args = parser.parse_args()
    large, rounds = (200, 3) if args.tiny else (args.size, args.rounds)
    small = measure(15, rounds)
    big = measure(large, rounds)
    print(f"writes in a repository of 15 and of {large:,} incidents (median of {rounds} each; the run page "
          "holds a full feed)")
    for key, label in (("write", "reporter write (writer process)"), ("occurrence", "watch poll, an occurrence"),
                       ("created", "watch poll, a new incident"), ("first", "watch's first poll (reads all)")):
        print(f"  {label:<34}: {small[key] * 1000:8.1f} ms  {big[key] * 1000:8.1f} ms  -> "
              f"{big[key] / small[key]:.2f}x")


if __name__ == "__main__":
    main()
