"""Self-check of lab 5: SIGKILL the trainer at random moments, over and over. With the checkpoint
manager no checkpoint is ever unloadable or fails its checksum, and every restart resumes from
the newest intact step. The naive torch.save to the final name, under the same treatment,
leaves a corrupt file (which proves the harness really kills mid-save).

Run: python labs/05-atomic-checkpoints/check.py [--kills 100] [--naive-kills 30]

The trainer runs in forked children of this process, which imports torch once, so each kill
and restart costs milliseconds rather than an interpreter start.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

import torch

from tooling.resilience.checkpoint import CheckpointManager

torch.set_num_threads(1)  # no OpenMP pool in this process: forking it stays safe
spec = importlib.util.spec_from_file_location("lab5_train", Path(__file__).with_name("train.py"))
lab = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
spec.loader.exec_module(lab)  # type: ignore[union-attr]
lab.build()  # the optimizer's first construction imports a lot: pay it here, once, not in every child


def kill_at_random(out: Path, writer: str, rng: random.Random) -> bool:
    """Run the trainer in a child, SIGKILL it at a random moment; True if a save was in flight."""
    pid = os.fork()
    if pid == 0:
        try:
            lab.train(out, writer)
        finally:
            os._exit(0)
    time.sleep(rng.uniform(0.05, 0.6))
    in_flight = any(p.name.endswith(".tmp") for p in (out / "checkpoints").glob(".*")) if writer == "manager" \
        else (out / lab.NAIVE_FILE).exists()
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return in_flight


def check_manager(kills: int, rng: random.Random) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out, newest, mid_save, restarts = Path(tmp), 0, 0, 0
        log = out / "resumes.log"
        for _ in range(kills):
            seen = len(log.read_text().splitlines()) if log.exists() else 0
            mid_save += kill_at_random(out, "manager", rng)
            started = log.read_text().splitlines()[seen:] if log.exists() else []
            if started:  # the child got as far as resuming before the kill
                restarts += 1
                assert started[0] == f"resume {newest}", f"expected a resume from step {newest}: {started[0]}"
            manager = CheckpointManager(out / "checkpoints")  # what the next start does first
            bad = [e.file for e in manager.entries if not manager.verify(e)]
            assert not bad, f"checkpoints failing their checksum: {bad}"
            for entry in manager.entries:
                torch.load(out / "checkpoints" / entry.file, weights_only=False)  # every one loads
            latest = manager.entries[-1].step if manager.entries else 0
            assert latest >= newest, f"resume went back from step {newest} to {latest}"
            newest = latest
        print(f"checkpoint manager: {kills} SIGKILLs ({mid_save} with a save in flight): 0 unloadable or "
              f"checksum-failing checkpoints; {restarts} restarts each resumed from the newest intact "
              f"step, reaching step {newest}")


def check_naive(kills: int, rng: random.Random) -> int:
    corrupt = 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        (out / "checkpoints").mkdir()
        for _ in range(kills):
            kill_at_random(out, "naive", rng)
            try:
                torch.load(out / lab.NAIVE_FILE, weights_only=False)
            except FileNotFoundError:
                continue
            except Exception:
                corrupt += 1
                (out / lab.NAIVE_FILE).unlink()  # a person would have to do this by hand
    print(f"naive torch.save: {corrupt} of {kills} SIGKILLs left a corrupt checkpoint")
    return corrupt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--naive-kills", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    check_manager(args.kills, rng)
    assert check_naive(args.naive_kills, rng) > 0, "the naive writer never broke: the kills are not landing mid-save"
    print("lab 5 self-check: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
