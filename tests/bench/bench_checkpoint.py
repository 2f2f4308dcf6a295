"""Benchmarks of the resilience primitives, each against a baseline measured in this run.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_checkpoint.py [--tiny])
- checkpoint manager save (tmp file, checksum, fsync, rename, directory fsync, manifest) vs
  torch.save plus an fsync of the same bytes, the least a durable save can cost; target at
  most 1.1x. A torch.save left in the page cache is printed beside it, for context only;
- time the training loop is blocked by a background save vs a synchronous one; target at most 0.2x;
- NaN guard per-step overhead on a small training step; target under 2%.
Every figure is a ratio against a baseline of the same run, printed, never asserted: the
machine's load moves both sides alike. --tiny (a few KB of state, 2 rounds, a few guard steps)
runs in seconds, for a smoke test of this script.
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

import torch

from paired import paired_rounds, seconds, threads
from tooling.resilience.checkpoint import CheckpointManager
from tooling.resilience.nan_guard import NaNGuard



def durable_save(state: dict[str, torch.Tensor], path: Path) -> None:
    """The baseline: torch.save, then fsync the file, so its bytes are on disk as well."""
    torch.save(state, path)
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def checkpoint_figures(root: Path, *, tiny: bool) -> None:
    # ~100 MB, a small model's worth; or a few KB for the smoke test
    state = {f"layer{i}": torch.randn(16, 16) if tiny else torch.randn(1024, 1024) for i in range(4 if tiny else 24)}
    rounds = 2 if tiny else 8
    sync = CheckpointManager(root / "sync", keep=2)
    background = CheckpointManager(root / "async", keep=2, background=True)

    def plain(kind: str, save: Callable[[dict[str, torch.Tensor], Path], None], step: int) -> float:
        # like a real run: a new file per step, the one from two saves ago deleted (keep 2),
        # outside the timing, as the manager's rotation runs after its save returns
        took = seconds(lambda: save(state, root / f"{kind}-{step}.pt"))
        (root / f"{kind}-{step - 2}.pt").unlink(missing_ok=True)
        return took

    def managed(manager: CheckpointManager, step: int) -> float:
        # what blocks the loop: all of a synchronous save; only the copy into staging buffers of
        # a background one. The write and the rotation go on in threads, waited for untimed
        took = seconds(lambda: manager.save(state, step))
        manager.wait()
        return took

    measures: dict[str, Callable[[int], float]] = {
        "cached": lambda step: plain("cached", torch.save, step),
        "durable": lambda step: plain("durable", durable_save, step),
        "managed": lambda step: managed(sync, step),
        "blocked": lambda step: managed(background, step)}
    times: dict[str, list[float]] = {name: [] for name in measures}
    for step in range(rounds):  # interleaved, each first in turn: the disk's moods and the
        order = list(measures)  # writeback of the previous round hit all four alike
        for name in order[step % 4:] + order[:step % 4]:
            times[name].append(measures[name](step))
    sync.close()
    background.close()
    cached, durable, synchronous, blocked = (statistics.median(times[name]) for name in measures)
    size = sum(t.numel() * t.element_size() for t in state.values())
    print(f"checkpoint of {size / 2**20:.3g} MiB, median of {rounds}")
    print(f"  torch.save + fsync (baseline)        : {durable * 1000:7.1f} ms")
    print(f"  torch.save, page cache only (context): {cached * 1000:7.1f} ms  -> {cached / durable:5.2f}x baseline")
    print(f"  CheckpointManager.save (synchronous) : {synchronous * 1000:7.1f} ms  -> {synchronous / durable:5.2f}x "
          f"baseline (target <= 1.1x)")
    print(f"  loop blocked by a background save    : {blocked * 1000:7.1f} ms  -> {blocked / synchronous:5.2f}x "
          f"synchronous (target <= 0.2x)")


def nan_guard_figures(*, tiny: bool) -> None:
    steps_per_round, rounds = (2, 3) if tiny else (20, 31)
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
        for _ in range(steps_per_round):
            step(with_guard)

    steps(True)  # warm-up
    paired = paired_rounds(steps, rounds=rounds, steps_per_round=steps_per_round)
    print(f"NaN guard: {paired.bare_ms:.2f} ms per step without -> overhead {paired.mid - 1:+.1%} "
          f"({paired.spread(1)}; target < 2%)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a few KB of state, 2 rounds: a smoke test in seconds")
    args = parser.parse_args()
    torch.set_num_threads(threads())
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint_figures(Path(tmp), tiny=args.tiny)
    nan_guard_figures(tiny=args.tiny)


if __name__ == "__main__":
    main()
