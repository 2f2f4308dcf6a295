"""Benchmark: `tooling scan LOG --json` on a 1 GiB training log vs `grep -c -E -f WORDS LOG`.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_scan.py [--gib N] [--tiny])
WORDS is a dozen literal failure words (what a person greps a log for first): the target is
tooling scan within 1.5x of that grep (issue 25). grep also runs with PATTERNS, every recogniser
of the failure-mode catalogue, one per line (`-i`): the least work that finds the same lines
tooling scan finds, which it also reads and drafts incidents from. Prints each time (wall, and
CPU: on a shared machine the CPU time moves less), the ratios and tooling scan's peak RSS
(target under 200 MiB), all measured in this run on this machine, with the load average.
grep with PATTERNS runs twice: in this environment's locale (as a shell would run it) and with
LC_ALL=C, its fastest. `--tiny` (~20 MB, 1 repeat) is the smoke test's size: a few seconds,
figures not meaningful.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
NOW = "2026-11-29T12:00:00+00:00"
# Rare failures, one every FAILURE_EVERY lines, in the shapes real logs have.
FAILURES = (
    "Nov  2 {clock} node0{n:02d} kernel: [812345.678934] NVRM: Xid (PCI:0000:ca:00): 79, pid='<unknown>', "
    "name=<unknown>, GPU has fallen off the bus.",
    "[rank{r}]:[E1102 {clock}.412345 48301 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=81234, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran for "
    "600027 milliseconds before timing out.",
    "[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 6 has a total capacity of "
    "79.10 GiB of which 3.19 GiB is free.",
    "slurmstepd: error: *** JOB 48213 ON node0{n:02d} CANCELLED AT 2026-11-02T{clock} DUE TO PREEMPTION ***",
    "[rank{r}]: OSError: [Errno 28] No space left on device: '/checkpoints/demo-7b/step-003000/model.pt.tmp'",
    "Nov  2 {clock} node0{n:02d} kernel: [812346.001234] NVRM: Xid (PCI:0000:3b:00): 48, pid=48301, name=python3, "
    "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 0.",
)
FAILURE_MODES = ("gpu.fell-off-bus", "nccl.collective-timeout", "cuda.oom", "scheduler.preemption",
                 "storage.disk-full", "gpu.hbm-ecc")  # of FAILURES, in order
# the baseline's words: literal, case as logs write them
WORDS = ("Xid", "NCCL WARN", "Watchdog caught", "out of memory", "OutOfMemoryError", "No space left",
         "Disk quota exceeded", "PREEMPTION", "Traceback", "Segmentation fault", "uncorrectable", "Error")
FAILURE_EVERY = 100_000
BLOCK = 10_000  # lines generated at a time


def _healthy(rnd: random.Random, i: int) -> str:
    clock = f"{3 + i // 2_000_000 % 20:02d}:{i // 30_000 % 60:02d}:{i // 500 % 60:02d}"
    kind = rnd.random()
    if kind < 0.55:
        return (f"2026-11-02 {clock},{i % 1000:03d} INFO [train.py:214] step {i // 16} | loss {2.6 - i * 1e-8:.4f} | "
                f"grad_norm {0.7 + rnd.random() * 0.4:.3f} | lr 3.00e-04 | tokens/s {405_000 + i % 13_000:,} | "
                f"mfu 41.{i % 10}%\n")
    if kind < 0.93:
        return (f"node0{i % 64:02d}:48213:48303 [{i % 8}] NCCL INFO Channel {i % 32:02d}/32 : {i % 16}[{i % 8}] -> "
                f"{(i + 1) % 16}[{(i + 1) % 8}] via P2P/IPC/read\n")
    if kind < 0.995:
        return (f"[rank{i % 16}]:[I1102 {clock}.{i % 1_000_000:06d} 48213 ProcessGroupNCCL.cpp:2110] [PG 0 Rank "
                f"{i % 16}] ProcessGroupNCCL broadcast unique ID through store took {i % 90} ms\n")
    if kind < 0.998:
        return (f"2026-11-02 {clock},{i % 1000:03d} WARNING [train.py:250] slow step {i // 16}: 7.{i % 10} s "
                f"(median 6.1 s) on rank {i % 16}\n")
    return ("/usr/local/lib/python3.10/dist-packages/torch/utils/checkpoint.py:1399: FutureWarning: "
            "`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', args...)` instead.\n")


def write_log(path: Path, size: int, *, seed: int = 1) -> tuple[int, int]:
    """A training log of about ``size`` bytes; returns (lines, failure lines) written."""
    rnd = random.Random(seed)
    written = lines = failures = 0
    due = FAILURE_EVERY
    with open(path, "w", encoding="utf-8") as out:
        while written < size:
            block = [_healthy(rnd, lines + k) for k in range(BLOCK)]
            lines += BLOCK
            if lines >= due:
                due += FAILURE_EVERY
                clock = f"{3 + failures % 20:02d}:{failures % 60:02d}:{(7 * failures) % 60:02d}"
                block.append(FAILURES[failures % len(FAILURES)].format(clock=clock, n=failures % 64, r=failures % 16)
                             + "\n")
                failures, lines = failures + 1, lines + 1
            text = "".join(block)
            out.write(text)
            written += len(text.encode("utf-8"))
    return lines, failures


def patterns_file(path: Path) -> int:
    sys.path.insert(0, str(PROJECT))
    from tooling.catalogue.modes import catalogue

    patterns = [p for mode in catalogue().modes for p in mode.recognisers]
    path.write_text("".join(p + "\n" for p in patterns), encoding="utf-8")
    return len(patterns)


Run = tuple[float, int, str, float]


def run_measured(command: list[str], env: dict[str, str] | None = None) -> Run:
    """Wall time, peak RSS in KiB, standard output and CPU time (user and system) of a command; the
    child is reaped with wait4, so the RSS is its own (not the largest of every child this
    process ever had)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=err, env=env, cwd=PROJECT)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if child.returncode not in (0, 1):
            raise SystemExit(f"{command[0]} failed ({child.returncode}): {err.read().decode()[-2000:]}")
        return elapsed, usage.ru_maxrss, out.read().decode(), usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gib", type=float, default=1.0, help="size of the generated log (default: 1 GiB)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tiny", action="store_true", help="smoke-test size: ~20 MB, 1 repeat")
    args = parser.parse_args()
    size = 20_000_000 if args.tiny else int(args.gib * (1 << 30))
    repeat = 1 if args.tiny else args.repeat
    with tempfile.TemporaryDirectory() as tmp:
        log, patterns, words = Path(tmp) / "train.log", Path(tmp) / "PATTERNS", Path(tmp) / "WORDS"
        lines, failures = write_log(log, size)
        count = patterns_file(patterns)
        words.write_text("".join(w + "\n" for w in WORDS), encoding="utf-8")
        grep = ["grep", "-c", "-E", "-i", "-f", str(patterns), str(log)]
        grep_words = ["grep", "-c", "-E", "-f", str(words), str(log)]
        scan = [sys.executable, "-m", "tooling", "--now", NOW, "scan", str(log), "--json"]
        run_measured(grep_words)  # warm the page cache for every contender
        runs: dict[str, list[Run]] = {name: [] for name in ("words", "grep", "grep C", "scan")}
        load = os.getloadavg()[0]
        for _ in range(repeat):  # in turns: a change of load weighs on every contender alike
            runs["words"].append(run_measured(grep_words))
            runs["scan"].append(run_measured(scan))
            runs["grep"].append(run_measured(grep))
            runs["grep C"].append(run_measured(grep, {**os.environ, "LC_ALL": "C"}))
        bytes_ = log.stat().st_size
    load = (load + os.getloadavg()[0]) / 2
    report(runs, bytes_=bytes_, lines=lines, failures=failures, patterns=count, repeat=repeat, load=load)


def report(runs: dict[str, list[Run]], *, bytes_: int, lines: int, failures: int, patterns: int, repeat: int,
           load: float) -> None:
    median = {name: statistics.median(r[0] for r in results) for name, results in runs.items()}
    cpu = {name: statistics.median(r[3] for r in results) for name, results in runs.items()}
    rss = max(r[1] for r in runs["scan"]) / 1024
    drafts = json.loads(runs["scan"][0][2])
    found = sum(d["count"] for d in drafts)
    locale = os.environ.get("LC_ALL") or os.environ.get("LANG") or "unset"
    print(f"scan benchmark: {bytes_ / (1 << 30):.2f} GiB, {lines:,} lines, {failures} failure lines, "
          f"{patterns} patterns, median of {repeat}, load average {load:.1f} on {os.cpu_count()} cores")
    print(f"  grep -c -E -f WORDS ({len(WORDS)} words)         : {median['words']:7.3f} s  "
          f"({bytes_ / median['words'] / 1e6:6.0f} MB/s, {cpu['words']:.2f} s CPU), "
          f"{runs['words'][0][2].strip()} lines matched")
    print(f"  grep -c -E -i -f PATTERNS ({locale:>8})  : {median['grep']:7.3f} s  "
          f"({bytes_ / median['grep'] / 1e6:6.0f} MB/s), {runs['grep'][0][2].strip()} lines matched")
    print(f"  grep -c -E -i -f PATTERNS (LC_ALL=C)  : {median['grep C']:7.3f} s  ({bytes_ / median['grep C'] / 1e6:6.0f} MB/s)")
    print(f"  tooling scan --json (whole CLI)       : {median['scan']:7.3f} s  ({bytes_ / median['scan'] / 1e6:6.0f} MB/s), "
          f"{found} lines in {len(drafts)} drafts, {cpu['scan']:.2f} s CPU")
    print(f"  ratio tooling/grep WORDS              : {median['scan'] / median['words']:7.2f}x  (target <= 1.50x); "
          f"CPU {cpu['scan'] / cpu['words']:.2f}x")
    print(f"  ratio tooling/grep PATTERNS ({locale}) : {median['scan'] / median['grep']:7.2f}x")
    print(f"  ratio tooling/grep PATTERNS (LC_ALL=C): {median['scan'] / median['grep C']:7.2f}x")
    print(f"  tooling scan peak RSS                 : {rss:7.1f} MiB (target < 200 MiB)")


if __name__ == "__main__":
    main()
