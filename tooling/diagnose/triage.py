"""Walking a diagnostic ladder on this machine: the cheap checks run, the rest say why not.

Each check runs in its own process group with a timeout, so a stuck `df` on a dead NFS mount
costs seconds, not the night. Nothing needs root: checks that do are skipped when not root.
"""
from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from typing import Any, Callable

from tooling.programs import bounded, find

STEP_TIMEOUT = 5.0  # seconds per check
OUTPUT_LINES = 12
# A stage cut short by `head` dies of SIGPIPE (128 + 13); with pipefail that is the pipeline's status,
# yet the check answered.
SIGPIPE_EXIT = 141


@dataclass(frozen=True)
class StepResult:
    number: int
    name: str
    command: str | None
    status: str  # ok | found-nothing | failed | timeout | skipped
    detail: str  # the reason for a skip, else the tail of the output
    look_for: str
    clears: str
    next_action: str | None = None  # the step's `next`: what to do with what the output showed


def _program(command: str) -> str | None:
    """The first program a shell command runs, past VAR=value assignments.

    Tokenised the way the shell reads it, so that a ';' or '|' inside quotes (python3 -c "...; ...")
    does not cut the command short; unbalanced quotes leave the shell to report the error."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        for token in lexer:
            if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", token):
                return None if token in _OPERATORS else token
    except ValueError:
        return None
    return None


_OPERATORS = frozenset({";", "|", "||", "&", "&&", "(", ")", "<", ">", ">>"})


def skip_reason(step: dict[str, Any], *, pid: int | None) -> str | None:
    """Why the step cannot run on this machine now, or None when it can."""
    command = step.get("command")
    if not command:
        return "a check for a person: no command to run"
    needs = set(step.get("requires", []))
    for need, missing in _NEEDS:
        if need in needs and (reason := missing(pid)) is not None:
            return reason
    program = _program(command)
    if program and find(program) is None:
        return f"{program} is not installed here"
    if "torch" in needs and program and not _imports_torch(find(program) or program):
        return f"needs PyTorch ({program} cannot import torch)"
    return None


def _slurm_missing(_pid: int | None) -> str | None:
    if find("sinfo") is None:
        return "needs SLURM (sinfo not found)"
    if "SLURM_JOB_ID" not in os.environ:
        # sacct and sinfo answer on a login node too: only the job's id is missing
        return "needs the SLURM job: run it inside the job or set SLURM_JOB_ID=JOBID"
    return None


# In the order a reader should learn them: a rerun is never started, whatever else is missing.
_NEEDS: tuple[tuple[str, Callable[[int | None], str | None]], ...] = (
    ("rerun", lambda _: "needs a new run of the training; start it by hand when the cheaper checks are clear"),
    ("gpu", lambda _: None if find("nvidia-smi") else "no NVIDIA GPU here (nvidia-smi not found)"),
    ("pid", lambda pid: None if pid is not None else "needs the PID of a training process: pass --pid"),
    ("root", lambda _: None if os.geteuid() == 0 else "needs root (dmesg and friends are restricted for other users)"),
    ("slurm", _slurm_missing),
)


@functools.lru_cache(maxsize=None)
def _imports_torch(program: str) -> bool:
    """Whether a Python interpreter can import torch, asked without importing it (seconds saved).
    Other programs (torchrun) exist only where torch is installed: the PATH lookup covers them."""
    if not re.fullmatch(r"python[0-9.]*", os.path.basename(program)):
        return True
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)"
    try:
        return subprocess.run([program, "-c", probe], capture_output=True, timeout=STEP_TIMEOUT).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def run_step(number: int, step: dict[str, Any], *, pid: int | None, timeout: float = STEP_TIMEOUT) -> StepResult:
    base = dict(number=number, name=step["name"], command=step.get("command"),
                look_for=step["look_for"], clears=step["clears"], next_action=step.get("next"))
    reason = skip_reason(step, pid=pid)
    if reason is not None:
        return StepResult(status="skipped", detail=reason, **base)
    command = step["command"].replace("{pid}", str(pid))
    # pipefail: a pipeline whose first stage failed (grep on logs that are not there) is a failed
    # check, not an "ok" with an error message in it
    answer = bounded(["bash", "-o", "pipefail", "-c", command], timeout=timeout)
    if answer.status is None:
        return StepResult(status="timeout", detail=f"no answer within {timeout:g} s (a hung mount or device?)",
                          **base)
    output = answer.output
    tail = "\n".join(output.strip().splitlines()[-OUTPUT_LINES:])
    if answer.status in (0, SIGPIPE_EXIT):
        return StepResult(status="ok", detail=tail, **base)
    if answer.status == 1 and "grep" in command and not output.strip():
        return StepResult(status="found-nothing", detail="no matching lines", **base)
    return StepResult(status="failed", detail=f"exit {answer.status}: {tail}", **base)


def triage(ladder: dict[str, Any], *, pid: int | None, timeout: float = STEP_TIMEOUT) -> list[StepResult]:
    return [run_step(i + 1, step, pid=pid, timeout=timeout) for i, step in enumerate(ladder["steps"])]
