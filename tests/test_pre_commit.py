"""The pre-commit hook that ships with the project, run by the real pre-commit."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from support import CORPUS, PROJECT


def _pre_commit(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    # PIP_COMPILE=0 (pip's --no-compile; PIP_NO_COMPILE=1 would read as compile=1): the byte-compiling
    # of every module pre-commit's pip installs into the hook's environment cannot fail the install,
    # and was a third of this file's CPU; the hook compiles what it imports, as it imports it
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PIP_COMPILE": "0"}
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_shipped_hook_flags_a_broken_record_in_another_repository(tmp_path: Path) -> None:
    other = tmp_path / "team-repo"
    (other / "runbooks" / "runs").mkdir(parents=True)
    (other / "incidents").mkdir()
    shutil.copy(CORPUS / "runbooks" / "runs" / "demo-7b.yaml", other / "runbooks" / "runs")
    shutil.copy(CORPUS / "incidents" / "INC-0002.yaml", other / "incidents")
    shutil.copy(CORPUS / "broken" / "invalid-severity" / "INC-0100.yaml", other / "incidents")
    subprocess.run(["git", "init", "-q"], cwd=other, check=True)
    subprocess.run(["git", "add", "-A"], cwd=other, check=True)
    result = _pre_commit("try-repo", str(PROJECT), "tooling-validate", "--all-files",
                         cwd=other, home=tmp_path / "cache")
    assert result.returncode == 1, result.stdout + result.stderr
    assert ("incidents/INC-0100.yaml:6:11: [invalid-value] Expected one of: ['sev1', 'sev2', "
            "'sev3', 'sev4', 'unknown'] but received: 'critical'\n") in result.stdout
    assert "3 files checked: 1 error, 0 warnings" in result.stdout


def test_this_repository_passes_its_own_hook(tmp_path: Path) -> None:
    result = _pre_commit("run", "tooling-validate", "--all-files", cwd=PROJECT, home=tmp_path / "cache")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "validate resilience records" in result.stdout and "Passed" in result.stdout
