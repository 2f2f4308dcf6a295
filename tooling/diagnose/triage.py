"""Walking a diagnostic ladder on this machine: the cheap checks run, the rest say why not.

Each check runs in its own process group with a timeout, so a stuck `df` on a dead NFS mount
costs seconds, not the night. Nothing needs root: checks that do are skipped when not root.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
from dataclasses import dataclass
from typing import Any

STEP_TIMEOUT = 5.0  # seconds per check
OUTPUT_LINES = 12


@dataclass(frozen=True)
class StepResult:
    number: int
    name: str
    command: str | None
    status: str  # ok | found-nothing | failed | timeout | skipped
    detail: str  # the reason for a skip, else the tail of the output
    look_for: str
    clears: str


def _program(command: str) -> str | None:
    """The first program a shell command runs, past VAR=value assignments."""
    for token in shlex.split(command.split("|")[0].split(";")[0]):
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", token):
            return token
    return None


def skip_reason(step: dict[str, Any], *, pid: int | None) -> str | None:
    needs = set(step.get("requires", []))
    command = step.get("command")
    if not command:
        return "a check for a person: no command to run"
    if "rerun" in needs:
        return "needs a new run of the training; start it by hand when the cheaper checks are clear"
    if "gpu" in needs and shutil.which("nvidia-smi") is None:
        return "no NVIDIA GPU here (nvidia-smi not found)"
    if "pid" in needs and pid is None:
        return "needs the PID of a training process: pass --pid"
    if "root" in needs and os.geteuid() != 0:
        return "needs root (dmesg and friends are restricted for other users)"
    if "slurm" in needs and (shutil.which("sinfo") is None or "SLURM_JOB_ID" not in os.environ):
        return "needs to run inside the SLURM job (SLURM_JOB_ID is not set)"
    program = _program(command)
    if program and shutil.which(program) is None:
        return f"{program} is not installed here"
    return None


def run_step(number: int, step: dict[str, Any], *, pid: int | None, timeout: float = STEP_TIMEOUT) -> StepResult:
    base = dict(number=number, name=step["name"], command=step.get("command"),
                look_for=step["look_for"], clears=step["clears"])
    reason = skip_reason(step, pid=pid)
    if reason is not None:
        return StepResult(status="skipped", detail=reason, **base)
    command = step["command"].replace("{pid}", str(pid))
    process = subprocess.Popen(["bash", "-c", command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return StepResult(status="timeout", detail=f"no answer within {timeout:g} s (a hung mount or device?)",
                          **base)
    tail = "\n".join(output.strip().splitlines()[-OUTPUT_LINES:])
    if process.returncode == 0:
        return StepResult(status="ok", detail=tail, **base)
    if process.returncode == 1 and "grep" in command and not output.strip():
        return StepResult(status="found-nothing", detail="no matching lines", **base)
    return StepResult(status="failed", detail=f"exit {process.returncode}: {tail}", **base)


def triage(ladder: dict[str, Any], *, pid: int | None, timeout: float = STEP_TIMEOUT) -> list[StepResult]:
    return [run_step(i + 1, step, pid=pid, timeout=timeout) for i, step in enumerate(ladder["steps"])]
