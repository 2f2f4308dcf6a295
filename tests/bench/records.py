"""Generated records for the benchmarks: realistic, valid, varied."""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

START = datetime(2025, 1, 1)  # incidents every ~17 hours: 1,000 of them span about two years
SEVERITIES = ["sev1", "sev2", "sev3", "sev4"]
SYMPTOMS = ["nan", "hang", "divergence", "crash", "slowdown", "data", "infra", "checkpoint"]
LAYERS = ["gpu-hardware", "nccl", "storage", "scheduler", "model-code", "driver", "host"]

RUN = """kind: run
id: bench-run
title: Benchmark run
owner: alice
state: running
updated_at: 2026-11-28T09:00:00+00:00
"""

INCIDENT = """# yaml-language-server: $schema=../tooling/schemas/incident.schema.json
kind: incident
id: INC-{n:05d}
title: NCCL timeout in all-reduce on node{node:03d} at step {step}
run: bench-run
status: resolved
severity: {severity}
symptom: {symptom}
layer: {layer}
signatures:
  - NCCL WARN Timeout at work {work} on node{node:03d}
  - "Watchdog caught collective operation timeout: WorkNCCL(SeqNum={work}, OpType=ALLREDUCE)"
nodes: [node{node:03d}]
ranks: [{rank}, {rank2}]
reported_by: alice
detected_at: {day}T0{hour}:14:00+00:00
mitigated_at: {day}T0{hour}:40:00+00:00
resolved_at: {day}T1{hour}:00:00+00:00
timeline:
  - at: {day}T0{hour}:14:00+00:00
    event: Throughput alert; all ranks stuck in the same all-reduce except rank {rank}
  - at: {day}T0{hour}:30:00+00:00
    event: py-spy dump on all ranks; rank {rank} in a data loader read
  - at: {day}T0{hour}:40:00+00:00
    event: Drained node{node:03d}, restarted from the last checkpoint on a spare
impact:
  gpu_hours_lost: {gpu_hours}
  steps_lost: {steps_lost}
actions:
  - Drained node{node:03d}
  - Restarted from step {step}
root_cause: A stalled NFS read on one node held its rank outside the collective.
links:
  - title: logs
    url: https://logs.example.org/run/{n}
tags: [nccl, hang]
"""


def generate(root: Path, count: int) -> list[Path]:
    (root / "runbooks" / "runs").mkdir(parents=True)
    (root / "runbooks" / "runs" / "bench-run.yaml").write_text(RUN)
    incidents = root / "incidents"
    incidents.mkdir()
    paths = []
    for n in range(1, count + 1):
        path = incidents / f"INC-{n:05d}.yaml"
        path.write_text(INCIDENT.format(
            n=n, node=n % 256, step=n * 100, severity=SEVERITIES[n % 4], symptom=SYMPTOMS[n % 8],
            layer=LAYERS[n % 7], work=n * 7, rank=n % 512, rank2=(n + 1) % 512, 
            day=(START + timedelta(hours=17 * n)).date().isoformat(),
            hour=n % 9, gpu_hours=n % 300, steps_lost=n % 1000))
        paths.append(path)
    return paths


def full_feed(page: Path, *, now: datetime) -> None:
    """Give the run page at ``page`` the fullest feed a reporter keeps (a sample per sampling
    interval for 48 hours up to ``now``, 200 events): the largest page a reporter rewrites."""
    from tooling.records.runs import SAMPLE_EVERY
    from tooling.writers.feed_writes import EVENTS_KEPT, SAMPLES_KEPT

    start = now.replace(microsecond=0) - timedelta(hours=47)
    every = timedelta(seconds=SAMPLE_EVERY)
    samples = "".join(f"    - {{at: {(start + every * i).isoformat()}, step: {100 * i}, "
                      f"loss: 2.5, tokens_per_s: 3900.0}}\n" for i in range(int(SAMPLES_KEPT / every)))
    events = "".join(f"    - {{at: {start.isoformat()}, kind: start, job_id: '{4000 + i}', host: node017}}\n"
                     for i in range(EVENTS_KEPT))
    text = page.read_text()
    at = text.index("\nknown_issues:") + 1 if "\nknown_issues:" in text else len(text)
    page.write_text(f"{text[:at]}feed:\n  samples:\n{samples}  events:\n{events}{text[at:]}")
