"""Fixtures: throwaway record repositories."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from support import CORPUS

# Property tests: a few hundred examples in every run ("default", also as "ci"), many more with
# --hypothesis-profile=long (or HYPOTHESIS_PROFILE=long). No example database: runs stay alike.
settings.register_profile("default", max_examples=200, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("default"))
settings.register_profile("long", parent=settings.get_profile("default"), max_examples=5_000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository holding the small valid corpus (one run, two incidents, three ladders)."""
    root = tmp_path / "repo"
    root.mkdir()
    for folder in ("incidents", "runbooks"):
        shutil.copytree(CORPUS / folder, root / folder)
    (root / "mkdocs.yml").write_text("site_name: test\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


# Test tiers (markers registered, strictly, in pyproject.toml), applied here so that no test file
# has to carry them:
#   site   every test under tests/site/: site builds and the headless-browser tests
#   labs   every test under tests/labs/: the labs and their self-checks
#   slurm  every test that uses the `slurm` fixture: tests/labs/conftest.py starts a real SLURM
#          for the session (autouse there, so that is every test under tests/labs/)
#   slow   any other test slower than ~10 s: marked in its own file, or listed in SLOW below
# The fast tier is -m "not site and not labs and not slurm and not slow" (README.md).
TESTS = Path(__file__).resolve().parent
DIRECTORY_MARKERS = {"site": "site", "labs": "labs"}  # first folder under tests/ -> marker

# Tests elsewhere that took more than ~5 s on a 2-core machine, marked slow by node id (relative
# to tests/; without a [parameter] it covers every parameter) instead of in their files:
# node id -> why it is slow.
SLOW = {
    "test_pre_commit.py::test_shipped_hook_flags_a_broken_record_in_another_repository":
        "~15 s: `pre-commit try-repo` builds a fresh virtualenv and pip-installs this project into it",
    "test_checkpoint.py::test_a_reader_beside_the_trainer_breaks_nothing":
        "8-12 s per mode: a trainer and a reader process saving and loading checkpoints side by side",
    "test_new_records.py::test_twenty_concurrent_new_incidents_give_twenty_distinct_valid_files":
        "4-8 s: twenty `tooling new-incident` processes at once, on two cores",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        try:
            relative = item.path.resolve().relative_to(TESTS)
        except ValueError:  # a test file outside tests/, named on the command line
            continue
        if relative.parts[0] in DIRECTORY_MARKERS:
            item.add_marker(DIRECTORY_MARKERS[relative.parts[0]])
        if "slurm" in getattr(item, "fixturenames", ()):
            item.add_marker("slurm")
        node = "::".join([relative.as_posix(), *item.nodeid.split("::")[1:]])
        if node in SLOW or node.split("[", 1)[0] in SLOW:
            item.add_marker("slow")
