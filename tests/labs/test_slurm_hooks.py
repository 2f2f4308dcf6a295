"""The SLURM hooks on a real SLURM: `tooling job` in a batch script, and the Prolog/Epilog pair of scripts/slurm/."""
from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from support import tooling
from tooling.records.load import load_file

CUDA = "RuntimeError: CUDA error: an illegal memory access was encountered"


def sh(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


def until(condition: Callable[[], object], what: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def records(tmp_path: Path) -> Path:
    root = tmp_path / "records"
    root.mkdir()
    (root / "mkdocs.yml").write_text("site_name: hooks\n")
    assert tooling("new-run", "hooks", "--title", "Hooks", "--owner", "ci", cwd=root).returncode == 0
    return root


def timeline(root: Path, job: str) -> list[tuple[str, object]]:
    events = load_file(str(root / "runbooks" / "runs" / "hooks.yaml")).data.get("feed", {}).get("events", [])
    return [(e["kind"], e.get("state") or e.get("signal") or e.get("detail")) for e in events if e["job_id"] == job]


def end(root: Path, job: str) -> dict:  # type: ignore[type-arg]
    events = load_file(str(root / "runbooks" / "runs" / "hooks.yaml")).data["feed"]["events"]
    return next(e for e in events if e["job_id"] == job and e["kind"] == "end")


def incident(root: Path, number: str) -> dict:  # type: ignore[type-arg]
    return load_file(str(root / "incidents" / f"{number}.yaml")).data


def test_a_job_wrapped_by_tooling_job_records_its_failure_and_drafts_the_incident(tmp_path: Path) -> None:
    root = records(tmp_path)
    script = tmp_path / "job.sbatch"
    script.write_text(f"#!/bin/bash\nexec {sys.executable} -m tooling --root {root} job hooks -- "
                      f"{sys.executable} -c \"print('{CUDA}', flush=True); raise SystemExit(3)\"\n")
    job = sh("sbatch", "--parsable", f"--chdir={tmp_path}", f"--output={tmp_path}/out-%j.txt", str(script))
    until(lambda: not sh("squeue", "-h", "-j", job) and len(timeline(root, job)) == 2, f"job {job} to end")
    event = end(root, job)
    assert timeline(root, job) == [("start", None), ("end", "FAILED")] and event["exit_code"] == 3
    drafted = incident(root, event["incident"])
    assert (drafted["failure_mode"], drafted["signatures"], drafted["run"]) == ("cuda.illegal-memory-access", [CUDA], "hooks")
    assert drafted["notes"].startswith(f"Drafted by tooling job: SLURM job {job} (SLURM_JOB_ID {job}, restart 0) of run "
                                       "hooks ended FAILED with exit code 3 on ")
    checked = tooling("validate", cwd=root)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_prolog_and_epilog_record_a_failure_a_requeue_and_a_cancel(tmp_path: Path) -> None:
    root = records(tmp_path)
    opt_in = f"--comment=tooling-run=hooks@{root}"
    failing = sh("sbatch", "--parsable", opt_in, f"--output={tmp_path}/fail-%j.txt", "--wrap", f"echo '{CUDA}'; exit 3")
    long = sh("sbatch", "--parsable", opt_in, "--requeue", f"--output={tmp_path}/long-%j.txt", "--wrap", "sleep 120")
    quiet = sh("sbatch", "--parsable", f"--output={tmp_path}/quiet-%j.txt", "--wrap", "true")  # did not opt in
    until(lambda: "RUNNING" in sh("scontrol", "show", "job", long) and timeline(root, long), f"{long} to start")
    sh("scontrol", "requeue", long)  # a preemption
    # back after cred_expire+1 s (scripts/slurm-local: 11 s). Not forced with StartTime=now: a job
    # relaunched within 2 s of its Epilog skips its Prolog on slurmd 22.05 (see scripts/slurm-local)
    until(lambda: len(timeline(root, long)) >= 4, f"{long} back from the queue")
    sh("scancel", long)
    until(lambda: len(timeline(root, long)) == 5 and len(timeline(root, failing)) == 2, "the epilogs")
    assert timeline(root, long) == [("start", None), ("end", "REQUEUED"), ("requeue", "back from the queue: restart 1"),
                                    ("start", "restart 1"), ("end", "CANCELLED")]
    assert timeline(root, failing) == [("start", None), ("end", "FAILED")] and timeline(root, quiet) == []
    event = end(root, failing)
    assert event["exit_code"] == 3 and incident(root, event["incident"])["failure_mode"] == "cuda.illegal-memory-access"
    checked = tooling("validate", cwd=root)
    assert checked.returncode == 0, checked.stdout + checked.stderr
