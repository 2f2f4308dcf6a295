"""Helpers shared by the tests: the real `tooling` executable and file snapshots."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
