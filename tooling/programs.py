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
import sys
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
