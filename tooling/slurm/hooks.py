"""``tooling job RUN --prolog`` / ``--epilog``: the job's timeline from slurmd's side (scripts/slurm/).

An admin installs scripts/slurm/prolog and scripts/slurm/epilog (slurm.conf ``Prolog=``,
``Epilog=``); a job opts in with ``sbatch --comment=tooling-run=RUN@/path/to/playbook``. They run
this, as the job's user, with the environment slurmd gives them: ``SLURM_JOB_ID``,
``SLURM_JOB_RESTART_COUNT``, ``SLURMD_NODENAME`` (the array ids come from scontrol).

- Prolog: ``start``, after a ``requeue`` when the restart count says the job came back.
- Epilog: the job is still COMPLETING while the Epilog runs, and its final state (COMPLETED,
  FAILED, CANCELLED, TIMEOUT, or back to PENDING for a requeue) is set only once it has exited;
  so the Epilog starts this detached and it waits for that state (at most ``SETTLE_SECONDS``),
  then writes ``end`` with the exit code, and for a failure a draft incident.

Never an error: a hook that fails would drain the node, so problems go to stderr and the exit
status is 0.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from tooling.slurm.ending import end_event, incident_of
from tooling.slurm.job import Job, show
from tooling.slurm.wrap import Recorder

SETTLE_SECONDS, POLL_SECONDS = 60.0, 0.5
BUSY = ("COMPLETING", "RUNNING", "CONFIGURING")  # not ended yet, as far as scontrol says


def job_here() -> tuple[Job, dict[str, str]] | None:
    """The job this Prolog or Epilog runs for, and what scontrol says of it."""
    slurm_id = os.environ.get("SLURM_JOB_ID", "")
    if not slurm_id:
        return None
    info = show(slurm_id)
    array, task = info.get("ArrayJobId", ""), info.get("ArrayTaskId", "")
    restart = os.environ.get("SLURM_JOB_RESTART_COUNT", info.get("Restarts", "0"))
    count = info.get("NumNodes", "1").split("-")[0]  # 3, or 3-3 while it starts
    return Job(slurm_id, f"{array}_{task}" if array and task and task != "N/A" else slurm_id,
               os.environ.get("SLURMD_NODENAME") or info.get("BatchHost", "unknown"),
               int(restart) if restart.isdigit() else 0, info.get("NodeList", ""),
               int(count) if count.isdigit() else 1), info


def exit_code(info: dict[str, str]) -> int:
    """scontrol's ExitCode=E:S as a shell says it: 128+S for a death by signal S."""
    code, _, signal = info.get("ExitCode", "0:0").partition(":")
    return 128 + int(signal) if signal.isdigit() and int(signal) else int(code) if code.isdigit() else 0


def settled(slurm_id: str, *, seconds: float = SETTLE_SECONDS) -> tuple[str, dict[str, str]]:
    """The job's state once it has left COMPLETING: a requeued job shows as PENDING (or RUNNING
    again) with the same id, which the run record calls REQUEUED."""
    deadline = time.monotonic() + seconds
    info = show(slurm_id)
    while info.get("JobState", "COMPLETING") == "COMPLETING" and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
        info = show(slurm_id)
    state = info.get("JobState", "UNKNOWN")
    return ("REQUEUED" if state in ("PENDING", "RUNNING", "CONFIGURING", "REQUEUED") else state), info


def run_hook(hook: str, *, root: Path, run: str, clock: Callable[[], datetime]) -> int:
    recorder = Recorder(root=root, run=run, clock=clock)
    found = job_here()
    if found is None:
        recorder.warn(f"--{hook}: no SLURM_JOB_ID; expected to run as slurmd's {hook.capitalize()}")
        return 0
    job, info = found
    if hook == "prolog":
        recorder.events(*job.started())
        return 0
    state, info = settled(job.slurm_id)
    status = exit_code(info)
    incident = incident_of(state, root=root, now=clock(), run=run, job=job, exit_code=status,
                           log=Path(info["StdOut"]) if info.get("StdOut") else None, warn=recorder.warn)
    recorder.events(end_event(job, exit_code=status, state=state, step=recorder.last_step(), incident=incident))
    return 0
