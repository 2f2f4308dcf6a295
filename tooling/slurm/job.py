"""A SLURM job as the run record's timeline names it: ids from the environment, state from scontrol.

Read from inside the job (the batch script, ``tooling job``) or beside it (the Prolog/Epilog,
which get the same ``SLURM_JOB_ID``, ``SLURM_ARRAY_*`` and ``SLURM_RESTART_COUNT``).
"""
from __future__ import annotations

import os
import re
import socket
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# A job that ended in one of these failed by itself: the end event gets a draft incident. A
# cancel, a preemption, a requeue or a time limit is the scheduler's doing, and auto-resume's job.
FAILED_STATES = frozenset({"FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL"})
SCONTROL_SECONDS = 10.0


@dataclass(frozen=True)
class Job:
    slurm_id: str  # SLURM_JOB_ID, what scontrol takes
    job_id: str  # as people see it in squeue: 1234, or 1234_5 for task 5 of array 1234
    host: str
    restart: int  # SLURM_RESTART_COUNT: 0 on a first run, N after N requeues
    nodes: str = ""  # SLURM_JOB_NODELIST: n[1,3-4]
    node_count: int = 1  # SLURM_JOB_NUM_NODES

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Job | None:
        """The job this process runs in; None outside SLURM."""
        env = os.environ if environ is None else environ
        slurm_id, shown = env.get("SLURM_JOB_ID", ""), job_id(env)
        if not slurm_id or shown is None:
            return None
        restart, count = env.get("SLURM_RESTART_COUNT", "0"), env.get("SLURM_JOB_NUM_NODES", "1")
        return cls(slurm_id, shown, env.get("SLURMD_NODENAME") or socket.gethostname(),
                   int(restart) if restart.isdigit() else 0, env.get("SLURM_JOB_NODELIST", ""),
                   int(count) if count.isdigit() else 1)

    def started(self) -> list[dict[str, Any]]:
        """The events of the job's start: ``requeue`` first when it came back from the queue, then
        ``start``; a job of several nodes names them (after a swap, the spare is among them)."""
        where = f"on {self.nodes}" if self.node_count > 1 and self.nodes else None
        said = " ".join(part for part in (f"restart {self.restart}" if self.restart else None, where) if part)
        back = f"back from the queue: restart {self.restart}" + (f" {where}" if where else "")
        start = self.event("start", detail=said or None)
        return [self.event("requeue", detail=back), start] if self.restart else [start]

    def event(self, kind: str, **fields: Any) -> dict[str, Any]:
        """A ``feed.events`` item for this job (``at`` is filled in by the writer)."""
        return {"kind": kind, "job_id": self.job_id, "host": self.host, **fields}


def job_id(environ: Mapping[str, str] | None = None) -> str | None:
    """The id of the SLURM job this process runs in, as people see it in squeue: 1234, or 1234_5
    for task 5 of array 1234; None outside SLURM. The one reading of it from the environment
    (``tooling job``, ``tooling report --event``)."""
    env = os.environ if environ is None else environ
    array, task = env.get("SLURM_ARRAY_JOB_ID", ""), env.get("SLURM_ARRAY_TASK_ID", "")
    return f"{array}_{task}" if array and task else env.get("SLURM_JOB_ID") or None


def show(slurm_id: str) -> dict[str, str]:
    """``scontrol show job -o`` as a dict (JobState, Restarts, ExitCode, StdOut, Comment, ...);
    empty when scontrol cannot say (not on a SLURM node, the job long gone)."""
    try:
        done = subprocess.run(["scontrol", "show", "job", "-o", slurm_id], capture_output=True, text=True,
                              timeout=SCONTROL_SECONDS)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    if done.returncode != 0:
        return {}
    # values run to the next " Key=" (Comment and paths may hold spaces)
    pairs = re.findall(r"(?:^| )([A-Za-z:/]+)=(.*?)(?= [A-Za-z:/]+=|$)", done.stdout.strip())
    return dict(pairs)


def _seconds(text: str) -> int | None:
    """SLURM's [D-]HH:MM:SS (or MM:SS) as seconds; None for UNLIMITED and the like."""
    match = re.fullmatch(r"(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)", text)
    if not match:
        return None
    days, hours, minutes, seconds = (int(g or 0) for g in match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def end_state(job: Job, info: Mapping[str, str], *, exit_code: int | None, terminated: bool) -> str:
    """How the job ended, as SLURM's states name it, from inside the job at its end.

    While the batch script still runs, scontrol says RUNNING, or COMPLETING once the scheduler
    has begun to kill it; a requeue shows as a restart count above this run's. ``terminated``:
    the wrapper got a TERM (where scontrol cannot say, a death after it is the scheduler's doing).
    ``exit_code`` None: the trainer still runs, stopping after that TERM.
    """
    state = info.get("JobState", "")
    restarts = info.get("Restarts", "")
    if restarts.isdigit() and int(restarts) > job.restart:
        return "REQUEUED"
    if state and state not in ("RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED"):
        return state  # the scheduler already said (CANCELLED, TIMEOUT, PREEMPTED, NODE_FAIL, ...)
    if state == "COMPLETING" or (exit_code != 0 and terminated):  # the scheduler is ending it
        run, limit = _seconds(info.get("RunTime", "")), _seconds(info.get("TimeLimit", ""))
        return "TIMEOUT" if run is not None and limit is not None and run >= limit else "CANCELLED"
    return "COMPLETED" if exit_code == 0 else "FAILED"


def exit_status(returncode: int) -> int:
    """Popen's returncode as a shell reports it: 128+N for a death by signal N."""
    return 128 - returncode if returncode < 0 else returncode
