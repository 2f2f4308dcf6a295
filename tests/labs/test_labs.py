"""Each lab's self-check, run as a user would run it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

LABS = Path(__file__).resolve().parents[2] / "labs"
CHECKS = sorted(LABS.glob("*/check.py"))


def test_every_lab_has_a_readme_and_a_self_check() -> None:
    labs = sorted(p for p in LABS.iterdir() if p.is_dir())
    assert [p.name for p in labs] == [c.parent.name for c in CHECKS]
    assert all((lab / "README.md").is_file() and (lab / "train.py").is_file() for lab in labs)


@pytest.mark.parametrize("check", CHECKS, ids=[c.parent.name for c in CHECKS])
def test_lab_self_check_passes(check: Path) -> None:
    result = subprocess.run([sys.executable, str(check)], capture_output=True, text=True, timeout=900)
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "self-check: passed" in result.stdout


def test_lab4_watchdog_variant_passes() -> None:
    check = LABS / "04-hung-rank" / "check.py"
    result = subprocess.run([sys.executable, str(check), "--watchdog"], capture_output=True, text=True, timeout=900)
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "self-check (watchdog): passed" in result.stdout


@pytest.mark.parametrize("variant", ["straggler", "elastic"])
def test_lab6_variant_passes(variant: str) -> None:
    """--straggler: n2 slowed on purpose, named within 50 steps and filed as a throughput drop with
    its node; --elastic: torchrun --nnodes=2:3 goes on at two nodes when n2 is lost and at three
    when the spare joins, each time from the newest verified checkpoint."""
    check = LABS / "06-spare-nodes" / "check.py"
    result = subprocess.run([sys.executable, str(check), f"--{variant}"], capture_output=True, text=True, timeout=900)
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"lab 6 self-check ({variant}): passed" in result.stdout
