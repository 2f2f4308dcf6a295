"""Helpers shared by the tests: the real `tooling` executable, file snapshots, a small disk."""
from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

PROJECT = Path(__file__).resolve().parent.parent
CORPUS = PROJECT / "tests" / "corpus"


def tooling(*args: str, cwd: Path, timeout: float = 60, stdin: str | None = "",
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real CLI as a user would, in ``cwd`` (``env`` adds to the environment)."""
    return subprocess.run([sys.executable, "-m", "tooling", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (outside .git) with its bytes, to prove nothing changed."""
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.parts}


@contextmanager
def tmpfs(mount: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (such as 2m) mounted at ``mount``, made here: a real full disk, or a
    file system to remount read-only. Root only: the test is skipped where mounting is refused.
    Unmounted afterwards, lazily if something still holds a file there: never a mount left behind."""
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        if subprocess.run(["umount", str(mount)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "--lazy", str(mount)], check=False)
