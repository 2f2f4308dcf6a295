"""Shared fixtures: the real `tooling` executable and throwaway record repositories."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent
CORPUS = PROJECT / "tests" / "corpus"


def tooling(*args: str, cwd: Path, timeout: float = 60, stdin: str | None = "") -> subprocess.CompletedProcess[str]:
    """Run the real CLI as a user would, in ``cwd``."""
    return subprocess.run([sys.executable, "-m", "tooling", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository holding the small valid corpus (one run, two incidents, a ladder)."""
    root = tmp_path / "repo"
    root.mkdir()
    for folder in ("incidents", "runbooks"):
        shutil.copytree(CORPUS / folder, root / folder)
    (root / "mkdocs.yml").write_text("site_name: test\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (outside .git) with its bytes, to prove nothing changed."""
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.parts}
