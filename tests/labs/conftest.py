"""A real single-node SLURM for the lab tests, started and stopped by the project's script."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from workers import shared_while_used

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "slurm-local"


def _start() -> dict[str, str]:
    # one SLURM on this machine, shared by whoever runs tests: stopped only by the run that started it
    already_up = subprocess.run([str(SCRIPT), "status"], capture_output=True, timeout=60).returncode == 0
    started = subprocess.run([str(SCRIPT), "start"], capture_output=True, text=True, timeout=300)
    assert started.returncode == 0, f"could not start SLURM:\n{started.stdout}{started.stderr}"
    return {"conf": started.stdout.strip().rsplit("=", 1)[1], "stop": "" if already_up else "yes"}


def _stop(facts: dict[str, str]) -> None:
    if facts["stop"]:
        subprocess.run([str(SCRIPT), "stop"], capture_output=True, timeout=120)


@pytest.fixture(scope="session")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # once for a run, whatever its number of workers (tests/workers.py)
    with shared_while_used(tmp_path_factory, "slurm-local", _start, _stop) as facts:
        yield facts["conf"]


@pytest.fixture(autouse=True)
def _slurm_conf(slurm: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's sbatch, squeue and scontrol reach this SLURM: set for the test, not the session,
    so that a worker that also ran tests/slurm/ (another cluster's SLURM_CONF) sends nothing there."""
    monkeypatch.setenv("SLURM_CONF", slurm)
