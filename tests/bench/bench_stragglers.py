"""Benchmark of the straggler detector's cost per training step, against the same step without it.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_stragglers.py [--tiny])
- a small training step (the NaN guard benchmark's: 512 -> 1024 -> 512, batch 256) with and
  without ``with detector.timed()`` around its work, in a gloo process group of one rank, so that
  every 10th step pays the report's all_gather as a job's would; paired rounds, the ratio printed;
  target under 1%;
- the cost of one ``record()`` call alone, averaged over many, a report every 10th as in a job.
Figures are printed, never asserted: the machine's load moves both sides of a pair alike. --tiny
(a smaller model, a few steps) runs in seconds, for a smoke test of this script.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist

from paired import paired_rounds, seconds, threads
from tooling.resilience.stragglers import StragglerDetector



def step_figures(*, tiny: bool) -> None:
    steps_per_round, rounds, width = (10, 3, 64) if tiny else (20, 31, 512)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(width, 2 * width), torch.nn.GELU(), torch.nn.Linear(2 * width, width))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(width // 2, width)
    detector = StragglerDetector()

    def work() -> None:
        loss = model(x).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()

    def steps(with_detector: bool) -> None:
        for _ in range(steps_per_round):
            if with_detector:
                with detector.timed():
                    work()
            else:
                work()
            optimizer.step()

    steps(True)  # warm-up, and the first report's gather of the node names
    paired = paired_rounds(steps, rounds=rounds, steps_per_round=steps_per_round)
    print(f"straggler detector: {paired.bare_ms:.2f} ms per step without -> {paired.mid:.3f}x with it, "
          f"overhead {paired.mid - 1:+.2%} ({paired.spread()}, {steps_per_round} steps each; target < 1%)")


def record_figures(*, tiny: bool) -> None:
    calls = 1_000 if tiny else 200_000
    alone = StragglerDetector()
    took = seconds(lambda: [alone.record(0.001) for _ in range(calls)])
    print(f"  record(): {took / calls * 1e6:.2f} us a call, a report (one all_gather of one float) every "
          f"{alone.every}th; {calls} calls")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a few steps: a smoke test in seconds")
    args = parser.parse_args()
    torch.set_num_threads(threads())
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", init_method=Path(tmp, "store").as_uri(), rank=0, world_size=1)
        try:
            step_figures(tiny=args.tiny)
            record_figures(tiny=args.tiny)
        finally:
            dist.destroy_process_group()


if __name__ == "__main__":
    main()
