"""Benchmarks of the resilience primitives, each against a baseline measured in this run.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_checkpoint.py)
- checkpoint manager save (tmp file, checksum, fsync, rename, manifest) vs a plain torch.save
  of the same state to a path; target at most 1.3x;
- time the training loop is blocked by a background save vs a synchronous one; target at most 0.2x;
- NaN guard per-step overhead on a small training step; target under 2%.
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import torch

from tooling.resilience.checkpoint import CheckpointManager
from tooling.resilience.nan_guard import NaNGuard

REPEAT = 7


def seconds(action) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def checkpoint_figures(root: Path) -> None:
    state = {f"layer{i}": torch.randn(1024, 1024) for i in range(24)}  # ~100 MB, a small model's worth
    sync = CheckpointManager(root / "sync", keep=2)
    background = CheckpointManager(root / "async", keep=2, background=True)
    plain_times, managed_times, blocked_times = [], [], []
    for step in range(REPEAT):  # interleaved, so that the disk's good and bad moments hit all three
        # like a real run: a new file per step, the one from two saves ago deleted (keep 2)
        plain_times.append(seconds(lambda: torch.save(state, root / f"plain-{step}.pt")))
        (root / f"plain-{step - 2}.pt").unlink(missing_ok=True)
        managed_times.append(seconds(lambda: sync.save(state, step)))
        # the loop is blocked only for the in-memory copy; the write overlaps the next steps
        blocked_times.append(seconds(lambda: background.save(state, step)))
        background.wait()
    plain, managed, blocked = (statistics.median(t) for t in (plain_times, managed_times, blocked_times))
    mib = sum(t.numel() * t.element_size() for t in state.values()) / 2**20
    print(f"checkpoint of {mib:.0f} MiB, median of {REPEAT}")
    print(f"  plain torch.save to a new path       : {plain * 1000:7.1f} ms")
    print(f"  CheckpointManager.save (synchronous) : {managed * 1000:7.1f} ms  -> {managed / plain:5.2f}x plain "
          f"(target <= 1.3x)")
    print(f"  loop blocked by a background save    : {blocked * 1000:7.1f} ms  -> {blocked / managed:5.2f}x "
          f"synchronous (target <= 0.2x)")


GUARD_STEPS, GUARD_ROUNDS = 20, 31


def nan_guard_figures() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 512))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(256, 512)
    guard = NaNGuard(policy="skip")

    def step(with_guard: bool) -> None:
        loss = model(x).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if with_guard:
            guard.check(0, loss, model.parameters())
        optimizer.step()

    def steps(with_guard: bool) -> None:
        for _ in range(GUARD_STEPS):
            step(with_guard)

    steps(True)  # warm-up
    bare_times, ratios = [], []
    for _ in range(GUARD_ROUNDS):  # paired rounds: a slow moment of the machine hits both halves of a pair
        bare = seconds(lambda: steps(False))
        ratios.append(seconds(lambda: steps(True)) / bare)
        bare_times.append(bare)
    low, mid, high = statistics.quantiles(ratios, n=4)
    print(f"NaN guard: {statistics.median(bare_times) / GUARD_STEPS * 1000:.2f} ms per step without "
          f"-> overhead {mid - 1:+.1%} (median of {GUARD_ROUNDS} paired rounds; middle half "
          f"{low - 1:+.1%} to {high - 1:+.1%}; target < 2%)")


def main() -> None:
    torch.set_num_threads(2)
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint_figures(Path(tmp))
    nan_guard_figures()


if __name__ == "__main__":
    main()
