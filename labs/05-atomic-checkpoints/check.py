"""Self-check of lab 5: SIGKILL the trainer at random moments, over and over. With the checkpoint
manager no checkpoint is ever unloadable or fails its checksum, and every restart resumes from
the newest intact step. The naive torch.save to the final name, under the same treatment,
leaves a corrupt file (which proves the harness really kills mid-save).

The distributed part does the same to train_distributed.py under torchrun, 4 ranks: one rank
SIGKILLed in the middle of a save, each restart resuming on every rank from the newest committed
step whose shards all verify; then a byte flipped in one shard of the newest step (all ranks
fall back together), and the checkpoint of 4 ranks loaded into 2 (refused without --reshard,
since per-rank state does not reshard; loaded with it).

Run: python labs/05-atomic-checkpoints/check.py [--kills 100] [--naive-kills 30] [--dcp-kills 3]

The single-process trainer runs in forked children of this process, which imports torch once, so
each kill and restart costs milliseconds rather than an interpreter start; each torchrun start
costs seconds (four interpreters), so the distributed part kills fewer times.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from tooling.resilience.checkpoint import CheckpointManager
from tooling.resilience.distributed_checkpoint import DistributedCheckpointManager

DISTRIBUTED = Path(__file__).with_name("train_distributed.py")

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


def torchrun(out: Path, ranks: int, *options: str) -> tuple[subprocess.Popen[bytes], Path]:
    """Start train_distributed.py under torchrun, its output in out/torchrun.log; also each rank's
    own stdout and stderr, in the folder returned (read when a rank fails)."""
    logs = out / "logs" / str(len(list(out.glob("logs/*"))))  # one folder per start
    with open(out / "torchrun.log", "ab") as log:
        return subprocess.Popen([sys.executable, "-m", "torch.distributed.run", "--standalone",
                                 f"--nproc_per_node={ranks}", "--log-dir", str(logs), "--tee", "3",
                                 str(DISTRIBUTED), "--out", str(out), *options],
                                stdout=log, stderr=subprocess.STDOUT), logs


# One failed rank in torchrun's error summary: "rank : 2 (local_rank: 2)", "exitcode : -6 (pid: 9) (SIGABRT)"
FAILED_RANK = re.compile(r"rank\s*: (\d+) \(local_rank: (\d+)\)\s*exitcode\s*: (-?\d+) \(pid: \d+\)[ \t]*(\(\w+\))?")


def why_failed(code: int, summary: str, logs: Path) -> str:
    """Which rank failed first and how (torchrun's error summary lists it last, as the root cause),
    the others, and the end of that rank's stderr."""
    failed = FAILED_RANK.findall(summary)
    if not failed:
        return f"torchrun exited {code}; its output ends:\n{summary[-2000:]}"
    rank, local, status, signal_name = failed[-1]
    others = "; ".join(f"rank {r}: exit code {c} {n}".rstrip() for r, _, c, n in failed[:-1])
    stderr = b"".join(p.read_bytes() for p in logs.glob(f"*/attempt_*/{local}/stderr.log"))
    return (f"torchrun exited {code}: rank {rank} failed first, exit code {status} {signal_name}".rstrip()
            + (f" (then {others})" if others else "")
            + f"; the end of rank {rank}'s stderr:\n{stderr.decode(errors='replace')[-2000:]}")


def resumed(out: Path, seen: int, ranks: int, job: subprocess.Popen[bytes]) -> tuple[dict[int, int], dict[int, int]]:
    """Wait for the ``ranks`` "resumed" lines of a start (after the first ``seen`` lines of the
    log): each rank's step and PID."""
    deadline = time.monotonic() + 180
    while True:
        lines = (out / "ranks.log").read_text().splitlines()[seen:] if (out / "ranks.log").exists() else []
        found = [line.split() for line in lines if " resumed " in line]  # rank R pid P resumed S of W
        if len(found) == ranks:
            return {int(f[1]): int(f[5]) for f in found}, {int(f[1]): int(f[3]) for f in found}
        assert job.poll() is None and time.monotonic() < deadline, \
            f"torchrun ended or stalled before every rank resumed:\n{(out / 'torchrun.log').read_text()[-3000:]}"
        time.sleep(0.01)


def log_length(out: Path) -> int:
    return len((out / "ranks.log").read_text().splitlines()) if (out / "ranks.log").exists() else 0


def committed(folder: Path) -> int:
    """The newest committed step, after checking that every step the manifest names verifies."""
    manager = DistributedCheckpointManager(folder)  # what the next start reads
    bad = [entry.step for entry in manager.entries if not manager.verify(entry)]
    assert not bad, f"committed steps whose shards fail their checksum: {bad}"
    return manager.entries[-1].step if manager.entries else 0


def kill_one_rank_mid_save(out: Path, newest: int, rng: random.Random) -> bool:
    """Start 4 ranks, SIGKILL one of them while a save is in flight; whether it was still in flight."""
    seen = log_length(out)
    job, _ = torchrun(out, 4)
    steps, pids = resumed(out, seen, 4, job)
    assert set(steps.values()) == {newest}, f"expected every rank to resume from step {newest}: {steps}"
    handles = {rank: os.pidfd_open(pid) for rank, pid in pids.items()}  # never a recycled PID
    first = newest + rng.randint(2, 3)  # past a committed step or two
    deadline = time.monotonic() + 120
    # any save from that step on: under load this loop can sleep through the whole save of one step
    while not (saving := [p for p in (out / "checkpoints").glob(".step-*.tmp") if int(p.name[6:14]) >= first]):
        assert job.poll() is None and time.monotonic() < deadline, f"no save of step {first} or later began"
        time.sleep(0.002)
    target = saving[0]
    time.sleep(rng.uniform(0, 0.05))
    signal.pidfd_send_signal(handles[rng.randrange(4)], signal.SIGKILL)
    in_flight = target.exists()
    assert job.wait(timeout=120) != 0, "torchrun did not notice the killed rank"
    for handle in handles.values():  # torchrun stops the others; make sure of it
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(handle, signal.SIGKILL)
        os.close(handle)
    return in_flight


def run_to_end(out: Path, ranks: int, steps: int, *options: str) -> tuple[str | None, dict[int, int]]:
    """One start to its end: why it failed (None when torchrun exited 0) and the step each rank
    resumed from."""
    output = out / "torchrun.log"
    seen, start = log_length(out), output.stat().st_size if output.exists() else 0
    job, logs = torchrun(out, ranks, "--steps", str(steps), *options)
    code = job.wait(timeout=300)
    lines = [line.split() for line in (out / "ranks.log").read_text().splitlines()[seen:] if " resumed " in line]
    summary = output.read_bytes()[start:].decode(errors="replace")  # this start's part of it
    return (None if code == 0 else why_failed(code, summary, logs)), {int(f[1]): int(f[5]) for f in lines}


def check_distributed(kills: int, rng: random.Random) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out, newest, mid_save = Path(tmp), 0, 0
        folder = out / "checkpoints"
        for _ in range(kills):
            mid_save += kill_one_rank_mid_save(out, newest, rng)
            latest = committed(folder)
            assert latest >= newest, f"resume went back from step {newest} to {latest}"
            newest = latest
        shard = folder / f"step-{newest:08d}" / "__2_0.distcp"  # verified by rank 3 alone
        data = bytearray(shard.read_bytes())
        data[len(data) // 2] ^= 0x01
        shard.write_bytes(bytes(data))
        failed, steps = run_to_end(out, 4, newest)  # falls back, trains step newest again
        assert steps == {rank: newest - 1 for rank in range(4)}, \
            f"a flipped byte: expected every rank to resume from step {newest - 1}, got {steps}"
        assert failed is None, f"a flipped byte: every rank resumed from step {newest - 1}, then {failed}"
        failed, steps = run_to_end(out, 2, newest + 1)  # per-rank state of 4 ranks, into 2: refused
        refusal = "per-rank state does not reshard: resume with 4 ranks, or pass reshard=True"
        assert failed and refusal in (out / "torchrun.log").read_text(), "4 ranks' state loaded into 2 silently"
        failed, steps = run_to_end(out, 2, newest + 1, "--reshard")
        assert steps == {0: newest, 1: newest}, f"resharding 4 -> 2: expected both ranks at step {newest}, got {steps}"
        assert failed is None, f"resharding 4 -> 2: both ranks resumed from step {newest}, then {failed}"
        assert committed(folder) == newest + 1
    print(f"distributed checkpoint manager, 4 ranks under torchrun: {kills} SIGKILLs of one rank ({mid_save} "
          f"with the save still in flight): every start resumed on every rank from the newest committed step, "
          f"whose shards all verified; a flipped byte in one shard made all 4 ranks fall back to step "
          f"{newest - 1}; the step of 4 ranks was refused by 2 without --reshard and loaded with it")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--naive-kills", type=int, default=30)
    parser.add_argument("--dcp-kills", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    check_manager(args.kills, rng)
    assert check_naive(args.naive_kills, rng) > 0, "the naive writer never broke: the kills are not landing mid-save"
    check_distributed(args.dcp_kills, rng)
    print("lab 5 self-check: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
