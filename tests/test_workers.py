"""tests/workers.py in a real parallel run (pytest -n 3, pytest-xdist): a shared thing is running
for every test that uses it, started and stopped in turn, and left stopped; what is made once is
made once for the whole run."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

CONFTEST = """
import sys
from pathlib import Path

import pytest

sys.path.insert(0, {tests!r})
from workers import made_once, shared_while_used

LOG, RUNNING = Path({log!r}), Path({running!r})


def note(what: str) -> None:
    with LOG.open("a") as log:
        log.write(what + "\\n")


def start() -> dict[str, str]:
    assert not RUNNING.exists(), "started twice"
    RUNNING.write_text("up")
    note("start")
    return {{"name": "thing"}}


def stop(facts: dict[str, str]) -> None:
    RUNNING.unlink()
    note("stop " + facts["name"])


def make(folder: Path) -> Path:
    note("make")
    (folder / "made").write_text("once")
    return folder / "made"


@pytest.fixture(scope="session")
def thing(tmp_path_factory: pytest.TempPathFactory):
    with shared_while_used(tmp_path_factory, "thing", start, stop) as facts:
        yield facts


@pytest.fixture(scope="session")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made_once(tmp_path_factory, "made", make)
"""

TESTS_OF_THE_RUN = """
import time
from pathlib import Path

import pytest

LOG, RUNNING = Path({log!r}), Path({running!r})


@pytest.mark.parametrize("n", range(18))
def test_uses_the_running_thing(thing, made, n: int) -> None:
    assert thing == {{"name": "thing"}} and RUNNING.read_text() == "up"
    assert made.read_text() == "once"
    with LOG.open("a") as log:
        log.write("use\\n")
    time.sleep(0.1 * (n % 4))
"""


@pytest.mark.slow  # three workers start, each importing pytest and its plugins
def test_a_parallel_run_shares_what_it_starts_and_makes_and_leaves_it_stopped(tmp_path: Path) -> None:
    project, log, running = tmp_path / "project", tmp_path / "log", tmp_path / "running"
    project.mkdir()
    (project / "conftest.py").write_text(CONFTEST.format(tests=str(TESTS), log=str(log), running=str(running)))
    (project / "test_shared.py").write_text(TESTS_OF_THE_RUN.format(log=str(log), running=str(running)))
    alone = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_XDIST")}
    run = subprocess.run([sys.executable, "-m", "pytest", "-n", "3", "-p", "no:cacheprovider", "-q",
                          "--rootdir", str(project), "--basetemp", str(tmp_path / "basetemp"), str(project)],
                         cwd=project, capture_output=True, text=True, timeout=300, env=alone)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "18 passed" in run.stdout
    lines = log.read_text().splitlines()
    assert lines.count("use") == 18 and lines.count("make") == 1
    # started and stopped in turn (a worker that comes later may start it again), stopped at the end
    turns = [line for line in lines if line in ("start", "stop thing")]
    assert turns and turns == ["start", "stop thing"] * (len(turns) // 2), lines
    assert not running.exists()
