"""tests/cpu_charge.py: the CPU a test's child processes use is charged to that test, not to the
one that runs beside or after it: by cgroup where this machine has cgroup v1's cpuacct and we are
root, else by what the worker reaped."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import PROJECT

sys.path.insert(0, str(Path(__file__).parent))
import cpu_charge  # noqa: E402  (beside this file: the plugin itself)

TESTS = '''
import subprocess, sys, time

def test_burns():
    subprocess.run([sys.executable, "-c", "import time\\nend = time.process_time() + 1.0\\nwhile time.process_time() < end: pass"], check=True)

def test_sleeps():
    time.sleep(0.5)
'''


def charged(tmp_path: Path, group: str, *, runs: int = 1) -> dict[str, float]:
    """Each test of TESTS -> the CPU seconds the report charges it, run with the plugin under ``group``
    (``runs`` times, the report after the last: the runs before it as if killed before their report)."""
    (tmp_path / "test_load.py").write_text(TESTS)
    env = {**os.environ, "CPU_CHARGE_GROUP": group, "CPU_CHARGE_NAMES": str(tmp_path / "names")}
    for _ in range(runs):
        ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.cpu_charge",
                              "-c", "/dev/null", "--rootdir", str(tmp_path), str(tmp_path / "test_load.py")],
                             cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, ran.stdout + ran.stderr
    shown = subprocess.run([sys.executable, "tests/cpu_charge.py", "5"], cwd=PROJECT, env=env,
                           capture_output=True, text=True, timeout=60)
    assert list((tmp_path / "names").iterdir()) == []  # the report clears up
    return {line.split("s  ", 1)[1]: float(line.split()[0]) for line in shown.stdout.splitlines()
            if line.startswith("  ") and "::" in line}


@pytest.mark.skipif(not cpu_charge.usable(), reason="no cgroup v1 cpuacct to write to (root on this machine has one)")
def test_a_childs_cpu_is_charged_to_the_test_that_started_it(tmp_path: Path) -> None:
    group = f"pytest-cpu-{os.getpid()}"
    found = charged(tmp_path, group)
    assert found["test_load.py::test_burns"] >= 0.9, found  # its child's second of CPU
    assert found["test_load.py::test_sleeps"] < 0.3, found
    assert not (cpu_charge.ROOT.parent / group).exists()


def test_without_a_cgroup_a_test_is_charged_what_its_worker_reaped(tmp_path: Path) -> None:
    found = charged(tmp_path, "no/such/place")  # a group that cannot be made: as without root
    assert found["test_load.py::test_burns"] >= 0.9, found
    assert found["test_load.py::test_sleeps"] < 0.3, found


def test_a_run_killed_before_its_report_adds_nothing_to_the_next(tmp_path: Path) -> None:
    """A killed CI left its figures behind, and the next run's report charged 48 CPU-min where the machine
    had spent 44: each run starts from none."""
    group = f"pytest-cpu-{os.getpid()}" if cpu_charge.usable() else "no/such/place"
    found = charged(tmp_path, group, runs=2)
    assert 0.9 <= found["test_load.py::test_burns"] < 1.6, found  # one second, not two
