"""Benchmark of the loss-spike guard: its overhead per training step; target under 1%.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_loss_spike.py [--tiny])

The step is the NaN-guard benchmark's (tests/bench/bench_checkpoint.py): a two-layer MLP, AdamW,
a batch of 256, here cycling through eight batches so that the loss is as noisy as a real one
(half the steps above the running median, where the guard measures the deviation). The loop
without the guard clips the gradients, as training loops do; with it, the norm that clipping
returns is what the guard gets, so the overhead is the guard's own: reading two numbers, the
running median and MAD, the decision. The guard is past its warm-up (judging every step) before
anything is timed. Paired rounds, as the NaN guard's: each round times the bare steps, then the
guarded ones, and the ratio of each pair is kept, so a slow moment of the machine hits both halves
of a pair; the median of the ratios is printed, with the middle half. Beside it, the guard's cost
alone per check, timed on plain numbers, for context. Printed, never asserted. --tiny: a few
steps, for a smoke test of this script.
"""
from __future__ import annotations

import argparse
import random

import torch

from paired import paired_rounds, seconds, threads
from tooling.resilience.loss_spike import LossSpikeGuard, SpikeConfig



def per_step_overhead(*, tiny: bool) -> None:
    steps_per_round, rounds = (2, 3) if tiny else (20, 31)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 512))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batches = [torch.randn(256, 512) for _ in range(8)]
    config = SpikeConfig()
    guard = LossSpikeGuard(config)
    position = 0

    def step(with_guard: bool) -> None:
        nonlocal position
        x = batches[position % len(batches)]
        position += 1
        loss = model(x).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if with_guard:
            guard.check(position, loss, norm)
        optimizer.step()

    def steps(with_guard: bool) -> None:
        for _ in range(steps_per_round):
            step(with_guard)

    # past the warm-up, with a full window: every timed check is judged (the numbers of healthy
    # steps of this model, read once; the guard sees no difference from a loop's)
    for _ in range(config.warmup + config.window + 1 if not tiny else 2):
        step(True)
    paired = paired_rounds(steps, rounds=rounds, steps_per_round=steps_per_round)
    assert guard.spikes == 0, "a healthy loop must see no spike: the figure would time remedies, not checks"
    print(f"loss-spike guard: {paired.bare_ms:.2f} ms per step without -> {paired.mid:.4f}x with, "
          f"overhead {paired.mid - 1:+.2%} ({paired.spread()}; target < 1%)")


def check_cost(*, tiny: bool) -> None:
    """The guard alone: microseconds per check on a noisy loss, every check judged."""
    rng = random.Random(0)
    n = 2_000 if tiny else 50_000
    losses = [2.0 + rng.gauss(0.0, 0.1) for _ in range(n)]
    norms = [1.0 + rng.gauss(0.0, 0.1) for _ in range(n)]
    guard = LossSpikeGuard()
    warm = guard.config.warmup + guard.config.window
    for i in range(warm):
        guard.check(i, losses[i], norms[i])
    took = seconds(lambda: [guard.check(i, losses[i], norms[i]) for i in range(warm, n)])
    print(f"  the guard alone: {took / (n - warm) * 1e6:.1f} us per check (window {guard.config.window}, "
          f"loss and grad norm)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a few steps: a smoke test in seconds")
    args = parser.parse_args()
    torch.set_num_threads(threads())
    per_step_overhead(tiny=args.tiny)
    check_cost(tiny=args.tiny)


if __name__ == "__main__":
    main()
