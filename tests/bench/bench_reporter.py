"""Benchmark of the run reporter: what RunReporter costs a training step, against the same loop without it.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_reporter.py [--tiny])
- overhead per step at the default rate (a write a minute), on a small real torch model, paired
  against the same loop without reporting: median of paired rounds, as the NaN-guard bench
  measures (tests/bench/bench_checkpoint.py); target under 1%. Beside it the mean over all rounds,
  which also carries the rounds in which the writer thread ran;
- the same at a write a second, 60 times the default rate, where the writer's share shows;
- the default rate with its writes included: the default's median plus, once a minute, what a
  write cost the loop at a write a second (all the time lost there, per write);
- what one write takes in the writer process, on a run page holding a full feed (a sample per
  sampling interval for 48 hours, 200 events), and its share of a minute.
Every figure is a ratio against a baseline of the same run, printed, never asserted. --tiny (a few
steps, 3 rounds) runs in seconds, for a smoke test of this script.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import torch

from paired import threads
from records import full_feed
from tooling.resilience import RunReporter

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def repository(root: Path) -> Path:
    """The test corpus, its run page carrying a full feed: the largest page a reporter rewrites."""
    for folder in ("incidents", "runbooks"):
        shutil.copytree(CORPUS / folder, root / folder)
    full_feed(root / "runbooks" / "runs" / "demo-7b.yaml", now=datetime.now(timezone.utc))
    return root


def seconds(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def overhead(root: Path, *, every: float, steps_per_round: int, rounds: int,
             width: int) -> tuple[list[float], float, int, float]:
    """Paired rounds of the loop without and with the reporter: each round's ratio, the loop's
    seconds per step, the writes done during the rounds and the seconds they all cost the loop."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(width, 2 * width), torch.nn.GELU(), torch.nn.Linear(2 * width, width))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(256, width)
    reporter = RunReporter("demo-7b", root=root, every=every)
    step = 0

    def steps(report: bool) -> None:
        nonlocal step
        for _ in range(steps_per_round):
            loss = model(x).pow(2).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
            if report:
                reporter.step(step, loss=loss, tokens=step * 256)

    steps(True)  # warm-up; the first step also starts the writer and writes once
    reporter.flush()
    before = reporter.writes
    bare_times, reported_times = [], []
    for round_ in range(rounds):  # paired rounds: a slow moment of the machine hits both halves of a pair,
        order = (False, True) if round_ % 2 == 0 else (True, False)  # each half first in turn
        took = {report: seconds(lambda: steps(report)) for report in order}
        bare_times.append(took[False])
        reported_times.append(took[True])
    writes = reporter.writes - before
    reporter.close()
    ratios = [r / b for r, b in zip(reported_times, bare_times)]
    return ratios, statistics.median(bare_times) / steps_per_round, writes, sum(reported_times) - sum(bare_times)


def report(label: str, ratios: list[float], step_seconds: float, writes: int, target: str) -> None:
    low, mid, high = statistics.quantiles(ratios, n=4)
    print(f"{label}: {step_seconds * 1000:.2f} ms per step without -> {mid:.4f}x with the reporter, overhead "
          f"{mid - 1:+.2%} (median of {len(ratios)} paired rounds; middle half {low - 1:+.2%} to {high - 1:+.2%}; "
          f"mean of all rounds {statistics.fmean(ratios) - 1:+.2%}; {writes} writes){target}")


def write_cost(root: Path, *, writes: int) -> None:
    reporter = RunReporter("demo-7b", root=root, every=3600)
    took = []
    for step in range(1, writes + 1):
        reporter.step(step, loss=1.0)
        took.append(seconds(reporter.flush))
    reporter.close()
    write = statistics.median(took[1:] or took)  # the first one also starts the writer process
    print(f"one write of a page with a full feed: {write * 1000:.0f} ms, in the writer process (median of "
          f"{len(took[1:] or took)}) -> {write / 60:.4f}x of the minute between writes at the default rate")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a few steps, 3 rounds: a smoke test in seconds")
    args = parser.parse_args()
    torch.set_num_threads(threads())
    # the NaN-guard bench's model (512 wide, ~10 ms a step here) or a toy one for the smoke test
    steps_per_round, rounds, width = (2, 3, 32) if args.tiny else (20, 101, 512)
    with tempfile.TemporaryDirectory() as tmp:
        root = repository(Path(tmp))
        size = {"steps_per_round": steps_per_round, "rounds": rounds, "width": width}
        default, step_seconds, writes, _ = overhead(root, every=60.0, **size)
        report("run reporter, a write a minute (default)", default, step_seconds, writes, "; target < 1%")
        often, step_seconds, writes, lost = overhead(root, every=1.0, **size)
        report("run reporter, a write a second (60x)", often, step_seconds, writes, "")
        # the default rate is one write per minute of training: the typical step's overhead plus
        # what one write cost the loop (all the time the 60x loop lost, per write) in a minute
        per_write = lost / max(writes, 1)
        total = statistics.median(default) - 1 + per_write / 60
        print(f"run reporter at the default rate, writes included: {1 + total:.4f}x, overhead {total:+.2%} "
              f"(the default's median plus {per_write * 1000:.0f} ms of the loop per write, as lost at 60x, "
              "once a minute); target < 1%")
        write_cost(root, writes=3 if args.tiny else 11)


if __name__ == "__main__":
    main()
