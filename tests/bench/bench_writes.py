"""Benchmark: a reporter write, a watch poll that files a failure, `tooling set`, in a small and a large repository.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_writes.py [--size N] [--rounds R] [--tiny])
Two repositories of generated incidents (tests/bench/records.py), of 15 and of --size (default
10,000), each with the run page bench-run carrying the fullest feed a reporter keeps and the
playbook's ladders (runbooks/ladders/, as a team's repository has them). In each:
- a reporter write: RunReporter's writer process (python -m tooling.writers.feed_server), one
  step written and flushed, timed from the training process as bench_reporter.py times it;
- a watch poll that files one failure: the poll of `tooling watch` (its Watcher, in this process,
  following a log one Xid 79 line longer at each poll), timed whole: reading the log, filing the
  failure, saving the offsets. "an occurrence": the failure's incident is open, one more
  occurrence is written to it; "a new incident": the incident of the poll before was resolved
  meanwhile (by the edit `tooling set` makes, not timed), a new one is filed. The watch's first
  poll, which reads every incident once, is printed apart;
- `tooling set INC root_cause=...` (its function, in this process) of a resolved incident whose
  symptom a ladder serves; `tooling set INC symptom=plateau`, a symptom no ladder serves, which
  reads every record to count the incidents of that symptom for its ladder-missing warning, is
  printed apart.
The two repositories are measured in paired rounds, each first in turn (a slow moment of the
machine hits both halves of a pair): printed, each repository's median and the median of the
pairs' ratios (1.00x: a write costs the same whatever the repository holds). --tiny (15 and 200
incidents, 3 rounds) runs in seconds, for a smoke test of this script.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

from records import full_feed, generate
from tooling.commands.set_fields import set_command
from tooling.records.layout import path_of
from tooling.resilience import RunReporter
from tooling.rules.others import Repository
from tooling.watch import state as offsets
from tooling.watch.known import RACY
from tooling.watch.occurrences import Outcome
from tooling.watch.watcher import StallRule, Watcher
from tooling.writers.edit import edited_text, parse_assignment, rewrite

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
RUN = "bench-run"
PROJECT = Path(__file__).resolve().parents[2]
INCIDENT = "INC-00001"  # resolved; its symptom, hang, has a ladder of the playbook's


def repository(root: Path, incidents: int) -> Path:
    generate(root, incidents)
    shutil.copytree(PROJECT / "runbooks" / "ladders", root / "runbooks" / "ladders")
    full_feed(root / "runbooks" / "runs" / f"{RUN}.yaml", now=datetime.now(timezone.utc))  # the reporter's clock
    (root / "mkdocs.yml").write_text("site_name: bench\n")
    return root


def seconds(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def xid(k: int) -> str:
    """The k-th Xid 79 of one GPU, 2 minutes (of uptime) after the one before: a failure again."""
    return (f"[{812345.678934 + 120 * k:.6f}] NVRM: Xid (PCI:0000:ca:00): 79, pid=4242, name=python3, "
            "GPU has fallen off the bus.\n")


class Writer:
    """RunReporter of the repository's run: one step written and flushed at each call."""

    def __init__(self, root: Path) -> None:
        self.reporter, self.step = RunReporter(RUN, root=root, every=3600), 0

    def __call__(self) -> None:
        self.step += 1
        self.reporter.step(self.step, loss=2.0, tokens=self.step * 1000)
        self.reporter.flush()


class Polls:
    """A watch following one log of the repository's run, as `tooling watch` polls it."""

    def __init__(self, root: Path, folder: Path) -> None:
        self.root, self.log, self.state = root, folder / "train.log", folder / "offsets.json"
        self.log.write_text("")
        self.filed: list[Outcome] = []
        start = time.monotonic()
        self.watcher = Watcher(root=root, logs=[self.log], where={"run": RUN, "extra": {}},
                               state=offsets.load(self.state, RUN), rule=StallRule(root, RUN, None),
                               clock=lambda: NOW + timedelta(seconds=time.monotonic() - start),
                               emit=self.filed.append, once=True)
        self.failures = 0

    def __call__(self) -> None:
        """A poll that finds one more Xid 79 of the GPU."""
        with open(self.log, "a") as handle:
            handle.write(xid(self.failures))
        self.failures += 1
        self.watcher.poll(self.state)

    def resolve(self) -> None:
        """The incident filed last resolved, as `tooling set INC status=resolved resolved_at=...` does."""
        assignments = [parse_assignment("status=resolved"),
                       parse_assignment(f"resolved_at={(NOW + timedelta(hours=1)).isoformat()}")]
        rewrite(path_of(self.root, self.filed[-1].incident), lambda text: edited_text(text, assignments, now=NOW),
                universe=Repository(self.root), now=NOW + timedelta(hours=1), warnings=False)


class Sets:
    """`tooling set INCIDENT FIELD=VALUE` of the repository: root_cause=cause N, another N at each call."""

    def __init__(self, root: Path, incident: str, assignment: str = "root_cause=cause {}") -> None:
        self.root, self.incident, self.assignment, self.calls = root, incident, assignment, 0

    def __call__(self) -> None:
        self.calls += 1
        # what it prints: "updated incidents/INC-....yaml", and the warnings the edit brings
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            set_command(self.incident, [self.assignment.format(self.calls)], root=self.root, now=NOW)


def paired(small: Callable[[], object], large: Callable[[], object], rounds: int,
           between: Callable[[], None] = lambda: None) -> tuple[list[float], list[float]]:
    """Seconds of each call of ``small`` and of ``large``, in rounds alternating which goes first."""
    took: dict[int, list[float]] = {0: [], 1: []}
    for round_ in range(rounds):
        for which in ((0, 1) if round_ % 2 == 0 else (1, 0)):
            took[which].append(seconds((small, large)[which]))
        between()
    return took[0], took[1]


def report(label: str, small: list[float], large: list[float]) -> None:
    ratio = statistics.median(b / a for a, b in zip(small, large))
    print(f"  {label:<32}: {statistics.median(small) * 1000:8.1f} ms  {statistics.median(large) * 1000:8.1f} ms"
          f"  -> {ratio:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="incidents of the large repository (default 10,000)")
    parser.add_argument("--rounds", type=int, default=11, help="paired writes and polls of each kind (default 11)")
    parser.add_argument("--tiny", action="store_true", help="15 and 200 incidents, 3 rounds: a smoke test in seconds")
    args = parser.parse_args()
    size, rounds = (200, 3) if args.tiny else (args.size, args.rounds)
    with tempfile.TemporaryDirectory(prefix="bench-writes-") as tmp:
        folders = [Path(tmp) / "small", Path(tmp) / "large"]
        roots = [repository(folder / "repo", count) for folder, count in zip(folders, (15, size))]
        time.sleep(RACY)  # a file changed this recently is read again at each poll: let them age, as a repository's
        print(f"a reporter write, a watch poll and tooling set in a repository of 15 and of {size:,} incidents "
              f"(median of {rounds} paired rounds; the run page holds a full feed): 15, then the large one, then the "
              "median ratio")
        writers = [Writer(root) for root in roots]
        for writer in writers:
            writer()  # the first write also starts the writer process
        report("reporter write (writer process)", *paired(writers[0], writers[1], rounds))
        for writer in writers:
            writer.reporter.close()
        polls = [Polls(root, folder) for root, folder in zip(roots, folders)]
        first = [seconds(poll) for poll in polls]
        report("watch poll, an occurrence", *paired(polls[0], polls[1], rounds))

        def resolve() -> None:
            for poll in polls:
                poll.resolve()

        resolve()
        report("watch poll, a new incident", *paired(polls[0], polls[1], rounds, between=resolve))
        report("watch's first poll (reads all)", [first[0]], [first[1]])
        for poll in polls:
            assert [o.action for o in poll.filed] == ["created"] + ["occurrence"] * rounds + ["created"] * rounds
            poll.watcher.close()
        report("tooling set", *paired(*(Sets(root, INCIDENT) for root in roots), rounds))
        unserved = [seconds(Sets(root, INCIDENT, "symptom=plateau")) for root in roots]
        report("set symptom no ladder serves", [unserved[0]], [unserved[1]])


if __name__ == "__main__":
    main()
