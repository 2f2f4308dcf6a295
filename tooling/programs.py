"""Where a program the tooling runs is found: on PATH, else beside this Python.

A tool installed with the playbook (py-spy, pip's console scripts) lands in its virtualenv's
bin, which is not on PATH when ``.venv/bin/tooling`` is run without activating the virtualenv:
looked for on PATH alone, ``tooling triage`` said py-spy was not installed while ``tooling
stacks`` used it. Every lookup goes through :func:`find`, and every shell command the tooling
runs gets :func:`search_path`, so a command finds what the lookup found.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


def beside_python() -> Path:
    """The folder of this interpreter (its virtualenv's bin), not resolved through links."""
    return Path(sys.executable).parent


def search_path() -> str:
    """PATH with this Python's folder last: a program on PATH still wins, as the user set it."""
    return os.pathsep.join(p for p in (os.environ.get("PATH", ""), str(beside_python())) if p)


def find(program: str) -> str | None:
    """The program's path, or None when it is neither on PATH nor beside this Python."""
    return shutil.which(program, path=search_path())


@dataclass(frozen=True)
class Answer:
    """What a command run by :func:`bounded` said: its exit status (None: it gave no answer in
    time and was killed) and its output."""
    status: int | None
    output: str  # standard output, with standard error after it unless kept apart
    errors: str = ""  # standard error, when kept apart


def bounded(argv: list[str], *, timeout: float, apart: bool = False) -> Answer:
    """Run ``argv`` in a process group of its own, with this module's search path, for at most
    ``timeout`` seconds; then the whole group is killed, so a `df` or `cat` stuck on a dead NFS
    mount or a FIFO costs the timeout, never the night. ``apart`` keeps standard error out of the
    output (in :attr:`Answer.errors`)."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE if apart else subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, text=True, errors="replace", start_new_session=True,
                               env={**os.environ, "PATH": search_path()})  # finds what find() found
    try:
        output, errors = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return Answer(None, "")
    return Answer(process.returncode, output, errors or "")
