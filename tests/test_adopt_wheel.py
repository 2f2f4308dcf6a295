"""Adopting the playbook as a team would (issue 27, "What it must show"): the wheel built from the
checkout, installed (not editable) into a fresh virtualenv with its wiki extra (pip fetches the
dependencies from PyPI), then in an empty folder `tooling init`, `new-run`, `new-incident` with
flags, `validate`, `build` (strict, both editions, the playbook's pages present), `triage hang`,
`scan` of a log, `repeats`; a ladder of the team's own and a local failure mode take effect, and
`tooling doctor` names both."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from support import LUSTRE_MODE, PROJECT

NOW = "2026-12-06T12:00:00+00:00"
TOP_LEFT = {".venv", ".git", ".hypothesis", ".pytest_cache", "tests", "site", "build", "dist"}
LOCAL_MODE = LUSTRE_MODE
LOG = ("[2026-12-06 11:00:00] step 4410 loss 2.31\n"
       "[2026-12-06 11:00:05] LustreError: OST0007 is full, write failed\n"
       "[2026-12-06 11:00:09] RuntimeError: CUDA error: an illegal memory access was encountered\n")


def _left(folder: str, names: list[str]) -> set[str]:
    top = Path(folder) == PROJECT
    return {n for n in names if (top and n in TOP_LEFT) or n == "__pycache__" or n.endswith(".egg-info")
            or (Path(folder) == PROJECT / "docs" and n == "generated")}


def _extras() -> str:
    extras = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))["project"].get(
        "optional-dependencies", {})
    return "[wiki]" if "wiki" in extras else ""


@pytest.mark.slow
@pytest.mark.skipif(not (PROJECT / "tooling/site/playbook.py").exists(),
                    reason="needs the playbook plugin and its package data (issue 27 item 2), not landed yet")
def test_a_team_adopts_the_installed_wheel(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(PROJECT, source, ignore=_left)  # a build never writes into the checkout
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path / "dist"), str(source)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "dist").glob("*.whl")
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    # --no-compile: pip's byte-compiling of every installed module cannot fail an install (as in
    # tests/test_release.py); the commands below compile what they import, as they import it
    installed = subprocess.run([str(venv / "bin/python"), "-m", "pip", "install", "--quiet", "--no-compile",
                                "--disable-pip-version-check", f"{wheel}{_extras()}"],
                               capture_output=True, text=True, timeout=900)
    assert installed.returncode == 0, installed.stderr[-3000:]
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)

    def tooling(*args: str, cwd: Path, code: int = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(venv / "bin/tooling"), "--now", NOW, *args], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
        assert done.returncode == code, (args, done.stdout[-2000:], done.stderr[-2000:])
        return done

    # the package runs from the virtualenv, not from this checkout
    where = subprocess.run([str(venv / "bin/python"), "-c", "import tooling; print(tooling.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(venv))

    empty = tmp_path / "work"
    empty.mkdir()
    tooling("init", "wiki", "--lang", "en,ko", cwd=empty)
    wiki = empty / "wiki"
    tooling("new-run", "llama-13b", "--owner", "dana", cwd=wiki)
    tooling("new-incident", "--run", "llama-13b", "--title", "NCCL timeout on node7", "--severity", "sev2",
            "--symptom", "hang", "--signature", "Watchdog caught collective operation timeout", cwd=wiki)
    tooling("validate", "--strict", cwd=wiki)
    tooling("build", cwd=wiki)
    for page in ("site/playbook/index.html", "site/ko/playbook/index.html", "site/index.html", "site/ko/index.html"):
        assert (wiki / page).is_file(), page

    # the team's own ladder and failure mode
    ladders = wiki / "runbooks/ladders"
    ladders.mkdir()
    shipped = venv.glob("lib/python*/site-packages/tooling/playbook/runbooks/ladders/hang.yaml")
    text = next(shipped).read_text(encoding="utf-8")
    (ladders / "hang.yaml").write_text(text.replace("title: Training hangs", "title: Our cluster hangs", 1),
                                       encoding="utf-8")
    (wiki / "runbooks/catalogue.yaml").write_text(LOCAL_MODE, encoding="utf-8")
    tooling("validate", "--strict", cwd=wiki)
    assert tooling("triage", "hang", cwd=wiki).stdout.startswith("Our cluster hangs")
    (wiki / "train.log").write_text(LOG, encoding="utf-8")
    scanned = tooling("scan", "train.log", cwd=wiki).stdout
    assert "storage.lustre-ost-full" in scanned and "cuda.illegal-memory-access" in scanned
    tooling("scan", "train.log", "--write", "--run", "llama-13b", cwd=wiki)
    tooling("repeats", cwd=wiki)
    tooling("build", cwd=wiki)
    doctor = tooling("doctor", cwd=wiki).stdout.splitlines()
    assert doctor == ["overrides runbooks/ladders/hang.yaml",
                      "adds failure mode storage.lustre-ost-full (runbooks/catalogue.yaml)"]
