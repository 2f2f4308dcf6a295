"""A real SLURM of emulated nodes for the node health check's tests, started once per session by
the project's script (scripts/slurm-cluster: n1-n3 and the spare n4) in a folder and on ports of
its own, so that it runs beside the labs' single-node SLURM and a developer's cluster; stopped
after, and nothing of it left running. Every test under tests/slurm/ is in the slurm tier
(tests/conftest.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from emulated import HOOK, Cluster, Hook, start


@pytest.fixture(scope="session")
def session_cluster() -> Iterator[Cluster]:
    # the periodic health check off: each test runs it as slurmd would, when it wants to. One
    # folder and port for every run: a parallel run keeps these tests on one worker (the
    # slurm-cluster group of tests/conftest.py's GROUPS)
    cluster = start(Path("/tmp/playbook-cluster-tests"), 17310, "--nodes", "3", "--spares", "1",
                    "--health-interval", "0")
    yield cluster
    stopped = cluster.script("stop")
    assert stopped.returncode == 0 and not cluster.leftovers(), stopped.stderr + "\n".join(cluster.leftovers())


@pytest.fixture
def cluster(session_cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> Cluster:
    # scontrol, sinfo and sbatch in the test reach this cluster: set for the test, not the
    # session, so that a worker's later tests of the labs' SLURM send nothing here
    monkeypatch.setenv("SLURM_CONF", str(session_cluster.dir / "slurm.conf"))
    return session_cluster


@pytest.fixture
def hook(cluster: Cluster, tmp_path: Path) -> Hook:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "health-check").symlink_to(HOOK)
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "mkdocs.yml").write_text("site_name: health\n")
    (tmp_path / "shm").mkdir()
    made = Hook(cluster, tmp_path)
    made.configure()
    return made
