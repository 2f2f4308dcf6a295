"""What the workers of one parallel run (`pytest -n N`, pytest-xdist: .ci/run) share, so that a
session resource is made once for the run rather than once per worker, and stopped only by the
last worker that still uses it. Each worker is a pytest session of its own: a plain session
fixture would build the site N times, or stop the labs' SLURM under another worker's job.
Outside xdist (a plain `pytest`) every helper here does what the fixture did alone."""
from __future__ import annotations

import fcntl
import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import pytest


def run_folder(factory: pytest.TempPathFactory) -> Path | None:
    """The folder every worker of this run shares (the controller's basetemp: xdist gives each
    worker a basetemp below it), or None outside xdist."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return None
    return factory.getbasetemp().parent


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """``path`` (a lock file) held exclusively: one worker at a time in the block."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def made_once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], Path]) -> Path:
    """``make(folder)``'s result, made in a new folder by the first worker that asks and read by
    the others (which wait for it): only for what tests read and never change. A worker whose
    ``make`` failed leaves nothing behind: the next one tries again and fails as visibly."""
    shared = run_folder(factory)
    if shared is None:
        return make(factory.mktemp(name))
    folder, made = shared / name, shared / f"{name}.made"
    with locked(shared / f"{name}.lock"):
        if not made.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            made.write_text(str(make(folder)))
        return Path(made.read_text())


@contextmanager
def shared_while_used(factory: pytest.TempPathFactory, name: str, start: Callable[[], dict[str, str]],
                      stop: Callable[[dict[str, str]], None]) -> Iterator[dict[str, str]]:
    """``start()``'s facts (such as a configuration's path) while the block runs: started by the
    first worker that enters, stopped by ``stop(facts)`` when the last worker still inside
    leaves (a worker entering later starts it again)."""
    shared = run_folder(factory)
    if shared is None:
        value = start()
        try:
            yield value
        finally:
            stop(value)
        return
    state, me = shared / f"{name}.json", os.environ["PYTEST_XDIST_WORKER"]
    with locked(shared / f"{name}.lock"):
        held = json.loads(state.read_text()) if state.exists() else {"value": start(), "holders": []}
        held["holders"].append(me)
        state.write_text(json.dumps(held))
    try:
        yield held["value"]
    finally:
        with locked(shared / f"{name}.lock"):
            held = json.loads(state.read_text())
            held["holders"].remove(me)
            if held["holders"]:
                state.write_text(json.dumps(held))
            else:
                state.unlink()
                stop(held["value"])
