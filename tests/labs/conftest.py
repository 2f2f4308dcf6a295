"""A real single-node SLURM for the lab tests, started and stopped by the project's script."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Iterator

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "slurm-local"


@pytest.fixture(scope="session", autouse=True)
def slurm() -> Iterator[str]:
    # one SLURM on this machine, shared by whoever runs tests: stopped only by the session that started it
    already_up = subprocess.run([str(SCRIPT), "status"], capture_output=True, timeout=60).returncode == 0
    started = subprocess.run([str(SCRIPT), "start"], capture_output=True, text=True, timeout=300)
    assert started.returncode == 0, f"could not start SLURM:\n{started.stdout}{started.stderr}"
    conf = started.stdout.strip().rsplit("=", 1)[1]
    with pytest.MonkeyPatch.context() as patch:  # the session's own monkeypatch: restored afterwards
        patch.setenv("SLURM_CONF", conf)
        yield conf
    if not already_up:
        subprocess.run([str(SCRIPT), "stop"], capture_output=True, timeout=120)
