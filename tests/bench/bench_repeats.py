"""Benchmark: grouping repeat incidents for 10,000 and 100,000 generated incidents.

Run: ./dev bench   (or .venv/bin/python tests/bench/bench_repeats.py [--tiny])
Prints the time to group each size (target: 100,000 in under 10 s, growing near-linearly,
since there is no all-pairs comparison), the time the second level then adds (the same failures
joined by the automation that would have handled them, what the candidates ranking counts) and
the process's peak memory (target: under 1 GiB).
`--tiny` (1,000 and 10,000) is the smoke test's size: a few seconds, figures not meaningful.
"""
from __future__ import annotations

import argparse
import random
import resource
import time
from datetime import datetime, timedelta, timezone

from tooling.analysis.identity import identify_all
from tooling.analysis.incidents import incident_views
from tooling.analysis.levels import families
from tooling.analysis.repeats import groups_of
from tooling.records.model import Record

FAILURES = [  # (layer, symptom, log line with {n} noise slots)
    ("gpu-hardware", "crash", "NVRM: Xid (PCI:0000:{h2}:00): 79, pid={pid}, name=python, GPU has fallen off the bus."),
    ("gpu-hardware", "crash", "NVRM: Xid (PCI:0000:{h2}:00): 63, pid={pid}, Row Remapper: New row (0x{hex}) marked"),
    ("nccl", "hang", "NCCL WARN Timeout at work {n} on node{node}"),
    ("network-fabric", "hang", "mlx5_core 0000:{h2}:00.0 ibp{n}s0: Link down"),
    ("storage", "crash", "OSError: [Errno 28] No space left on device: '/shared/ckpt/step_{n}/rank_{rank}.pt'"),
    ("storage", "crash", "OSError: [Errno 122] Disk quota exceeded: '/nfs/ckpt/run{n}/latest'"),
    ("scheduler", "crash", "slurmstepd: error: *** JOB {n} ON node{node} CANCELLED AT 2026-{mm}-{dd}T0{hh}:14:00 DUE TO PREEMPTION ***"),
    ("model-code", "nan", "loss is nan at step {n}, grad_norm=inf"),
    ("driver", "crash", "RuntimeError: CUDA error: unknown error (pid {pid}, device {rank})"),
    ("model-code", "hang", "[Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={n}, OpType=BROADCAST) in eval"),
]


def generate(count: int, seed: int = 0) -> list[Record]:
    rng = random.Random(seed)
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    records = []
    for i in range(count):
        layer, symptom, line = FAILURES[i % len(FAILURES)]
        # every failure class also has many variants: a family id keeps classes apart
        family = rng.randrange(count // 50 + 1)
        noise = dict(n=rng.randrange(10**6), node=f"{rng.randrange(999):03d}", pid=rng.randrange(10**5),
                     h2=f"{rng.randrange(256):02x}", hex=f"{rng.randrange(16**8):08x}", rank=rng.randrange(512),
                     mm=f"{rng.randrange(1, 13):02d}", dd=f"{rng.randrange(1, 29):02d}", hh=rng.randrange(10))
        # a word, not a number, so that normalisation keeps the families apart
        marker = "".join(chr(ord("a") + int(d)) for d in str(family))
        signatures = [f"{line.format(**noise)} [{marker}]", f"checkpoint writer {marker} stalled"]
        records.append(Record(f"incidents/INC-{i:06d}.yaml", {
            "kind": "incident", "id": f"INC-{i:06d}", "title": f"incident {i}", "run": "bench",
            "status": "resolved", "severity": "sev2", "symptom": symptom, "layer": layer,
            "signatures": signatures, "detected_at": (start + timedelta(minutes=7 * i)).isoformat()}))
    return records


def measure(count: int) -> tuple[float, int, float, int]:
    """Seconds to group (identities included) and the groups; seconds the automation level adds
    and its families."""
    views = incident_views(generate(count))
    began = time.perf_counter()
    groups = groups_of(views, identities := identify_all(views))
    grouped = time.perf_counter()
    joined = families(groups, identities)
    return grouped - began, len(groups), time.perf_counter() - grouped, len(joined)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tiny", action="store_true", help="smoke-test size: 1,000 and 10,000 incidents")
    args = parser.parse_args()
    small, large = (1_000, 10_000) if args.tiny else (10_000, 100_000)
    print("repeat grouping benchmark (fingerprints + union-find, no pairwise comparison)")
    results = {}
    for count in (small, large):
        seconds, groups, level, joined = measure(count)
        results[count] = seconds
        print(f"  {count:>7,} incidents -> {groups:>6,} groups in {seconds:6.2f} s  ({seconds / count * 1e6:5.1f} us each);"
              f" -> {joined:,} by automation in {level:.2f} s more")
    growth = results[large] / results[small]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  10x the incidents took {growth:.1f}x the time (linear would be 10x)")
    print(f"  peak memory of this process: {peak:,.0f} MiB (target < 1024 MiB); {large:,} under 10 s: "
          f"{'yes' if results[large] < 10 else 'no'}")


if __name__ == "__main__":
    main()
