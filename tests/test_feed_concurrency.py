"""A training process's reporter and a person's `tooling set` on one run record: neither loses the other's writes."""
from __future__ import annotations

import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tooling.main import main
from tooling.records.load import load_file
from tooling.slurm.job import Job
from tooling.slurm.wrap import Recorder

REPORTER = """\
import select, sys, time
from tooling.resilience import RunReporter
reporter = RunReporter("demo-7b", root=sys.argv[1], every=0.0, sample_every=1.0)
step = 0
while not select.select([sys.stdin], [], [], 0)[0]:  # until the test closes our stdin
    step += 1
    reporter.step(step, loss=1.0 / step)
    time.sleep(0.005)
reporter.close()
print(step, reporter.writes)
"""
EDITS = 20


def progress(path: Path) -> tuple[int, str, str]:
    data = load_file(str(path)).data
    return data.get("progress", {}).get("step", 0), data.get("summary", ""), data["owner"]


@pytest.mark.slow
def test_reporter_and_person_interleaved_lose_nothing(repo: Path) -> None:
    path = repo / "runbooks" / "runs" / "demo-7b.yaml"
    trainer = subprocess.Popen([sys.executable, "-c", REPORTER, str(repo)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while progress(path)[0] == 0:
            assert time.monotonic() < deadline and trainer.poll() is None, "the reporter never wrote"
            time.sleep(0.05)
        for edit in range(EDITS):
            # the person's command, as typed: its lock and compare-and-swap against the reporter's
            assert main(["--root", str(repo), "set", "demo-7b", f"summary=edit {edit}", f"owner=person-{edit}"]) == 0
            step = progress(path)[0]
            while progress(path)[0] <= step:  # the reporter has written again since the edit...
                assert time.monotonic() < deadline + 120 and trainer.poll() is None
                time.sleep(0.02)
            # ...and the edit is still there
            assert progress(path)[1:] == (f"edit {edit}", f"person-{edit}")
    finally:
        out, err = trainer.communicate("stop\n", timeout=60)
    steps, writes = (int(n) for n in out.split())
    assert trainer.returncode == 0 and err == "", err
    assert progress(path) == (steps, f"edit {EDITS - 1}", f"person-{EDITS - 1}")
    print(f"{EDITS} edits by a person between {writes} writes of the reporter over {steps} steps: nothing lost")


@pytest.mark.slow
def test_a_job_event_waits_out_a_lock_held_longer_than_its_timeout(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A job's events happen once: `tooling job` tries again when the record stays locked (by the
    trainer's reporter, a person's `tooling set`) past one attempt's lock timeout."""
    path = repo / "runbooks" / "runs" / "demo-7b.yaml"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(path)!r}, os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "print('locked', flush=True); time.sleep(6.5)")], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    job = Job("4242", "4242", "node017", 0)
    started = time.monotonic()
    Recorder(root=repo, run="demo-7b", clock=lambda: datetime(2026, 11, 30, 12, tzinfo=timezone.utc)).events(
        job.event("end", exit_code=0, state="COMPLETED"))
    waited = time.monotonic() - started
    holder.wait()
    assert [(e["kind"], e["job_id"]) for e in load_file(str(path)).data["feed"]["events"]] == [("end", "4242")]
    assert capsys.readouterr().err == "" and waited > 5.0  # the first attempt timed out, unsaid
