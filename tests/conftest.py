"""Fixtures: throwaway record repositories."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from support import CORPUS


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
