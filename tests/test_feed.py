"""Machine writes to a run record (tooling.writers.feed_writes): only machine fields, bounded, never a person's edit lost."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from support import snapshot, tooling
from tooling.errors import UserError
from tooling.records.load import load_file
from tooling.writers.feed_writes import feed_run

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=timezone.utc)
HAND_WRITTEN = """\
# The live page of demo-7b; the on-call person keeps the summary current.
kind: run
id: demo-7b
title: Demo 7B pretraining
owner: alice
summary: stable since the restart   # written by a person
state: running
progress:
  total_steps: 100000   # planned by a person; machines never touch it
known_issues:
  - incident: INC-0002
    summary: Intermittent NCCL timeouts on node017
updated_at: 2026-11-28T09:00:00+00:00
"""


@pytest.fixture
def run_file(repo: Path) -> Path:
    path = repo / "runbooks" / "runs" / "demo-7b.yaml"
    path.write_text(HAND_WRITTEN)
    return path


def data(path: Path) -> dict:  # type: ignore[type-arg]
    return load_file(str(path)).data


def test_only_machine_fields_change_and_comments_and_updated_at_stay(repo: Path, run_file: Path) -> None:
    feed_run(repo, "demo-7b", now=NOW, progress={"step": 1200, "loss": 2.5},
             sample={"step": 1200, "loss": 2.5, "tokens_per_s": 3900.0},
             checkpoint={"step": 1000, "path": "/ckpt/ckpt-00001000.pt", "verified": True},
             events=[{"kind": "start", "job_id": "4242_1", "host": "node017"}])
    text = run_file.read_text()
    assert text == HAND_WRITTEN.replace("""\
progress:
  total_steps: 100000   # planned by a person; machines never touch it
""", """\
progress:
  step: 1200
  total_steps: 100000   # planned by a person; machines never touch it
  loss: 2.5
last_good_checkpoint:
  step: 1000
  path: /ckpt/ckpt-00001000.pt
  verified: true
feed:
  heartbeat_at: 2026-11-28T12:00:00+00:00
  samples:
    - {at: 2026-11-28T12:00:00+00:00, step: 1200, loss: 2.5, tokens_per_s: 3900.0}
  events:
    - {at: 2026-11-28T12:00:00+00:00, kind: start, job_id: '4242_1', host: node017}
""")
    assert tooling("validate", "--strict", "--now", NOW.isoformat(), cwd=repo).returncode == 0


def test_one_sample_per_interval_and_only_the_last_48_hours(repo: Path, run_file: Path) -> None:
    start = NOW - timedelta(hours=50)  # a sample every half hour for 50 hours, as an earlier writer left them
    old = "".join(f"    - {{at: {(start + timedelta(minutes=30 * i)).isoformat()}, step: {i}}}\n" for i in range(100))
    run_file.write_text(HAND_WRITTEN.replace("known_issues:", f"feed:\n  samples:\n{old}known_issues:"))
    for minute, step in ((31, 1000), (33, 1001), (45, 1002)):  # intervals of 10 minutes: 12:30, 12:30, 12:40
        feed_run(repo, "demo-7b", now=NOW + timedelta(minutes=minute), sample={"step": step}, sample_every=600)
    samples = data(run_file)["feed"]["samples"]
    times = [datetime.fromisoformat(s["at"]) for s in samples]
    last = NOW + timedelta(minutes=45)
    assert times[0] == last - timedelta(hours=48) + timedelta(minutes=15)  # older than 12:45 two days ago: gone
    assert [s["step"] for s in samples[-3:]] == [99, 1001, 1002]  # 12:33 replaced 12:31: the newest of its interval
    assert len(samples) == 94 + 2  # the old ones from 13:00 on, and two new ones


def test_a_restart_keeps_the_last_sample_of_the_run_before_it(repo: Path, run_file: Path) -> None:
    # the preempted run's last sample and the resumed run's first share an interval of 10 minutes:
    # the chart must still show where the old run stopped (the requeue race of lab 1)
    feed_run(repo, "demo-7b", now=NOW + timedelta(minutes=31), sample={"step": 500}, sample_every=600)
    feed_run(repo, "demo-7b", now=NOW + timedelta(minutes=32), sample_every=600,
             events=[{"kind": "start", "job_id": "4242_1", "host": "node018"}])
    for minute, step in ((33, 480), (34, 490)):  # the new run resumed from an earlier checkpoint
        feed_run(repo, "demo-7b", now=NOW + timedelta(minutes=minute), sample={"step": step}, sample_every=600)
    assert [s["step"] for s in data(run_file)["feed"]["samples"]][-2:] == [500, 490]


def test_events_keep_the_last_200(repo: Path, run_file: Path) -> None:
    for batch in range(3):
        feed_run(repo, "demo-7b", now=NOW, events=[{"kind": "signal", "job_id": str(batch * 100 + i), "signal": "USR1"}
                                                   for i in range(100)])
    events = data(run_file)["feed"]["events"]
    assert [e["job_id"] for e in events] == [str(i) for i in range(100, 300)]


def test_a_write_that_would_not_validate_leaves_the_file_as_it_was(repo: Path, run_file: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)  # named relative to where it runs, as validate names it
    before = snapshot(repo)
    with pytest.raises(UserError) as raised:
        feed_run(repo, "demo-7b", now=NOW, events=[{"kind": "ended", "job_id": "7"}])
    # feed.events is not in the file yet: located as deep as it exists, the record's mapping
    assert str(raised.value) == (
        "runbooks/runs/demo-7b.yaml:2:1: [invalid-value] Expected one of: ['start', 'signal', 'drain', 'requeue', "
        "'resume', 'end'] but received: 'ended' (not changed: the edit would make the record invalid)")
    run_file.write_text(HAND_WRITTEN.replace("state: running", "state: [running"))
    broken = snapshot(repo)
    with pytest.raises(UserError) as raised:
        feed_run(repo, "demo-7b", now=NOW, progress={"step": 1})
    assert str(raised.value) == (
        "runbooks/runs/demo-7b.yaml:8:9: [yaml-syntax] did not find expected ',' or ']' (while parsing a flow "
        "sequence); expected valid YAML (not changed: fix the file by hand first)")
    assert snapshot(repo) == broken != before
