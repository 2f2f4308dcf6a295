"""`tooling triage`: the ladder walked on this machine, bounded in time, skipping what cannot run."""
from __future__ import annotations

import shutil
import time
from pathlib import Path

from support import PROJECT, tooling
from tooling.diagnose.triage import run_step
from tooling.records.layout import ids


def _copy(tmp_path: Path) -> Path:
    for name in ("incidents", "runbooks"):
        shutil.copytree(PROJECT / name, tmp_path / name)
    return tmp_path


def test_triage_hang_completes_quickly_and_says_why_it_skips(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    began = time.monotonic()
    result = tooling("triage", "hang", cwd=root, timeout=60)
    elapsed = time.monotonic() - began
    assert result.returncode == 0, result.stderr
    assert elapsed < 30, f"triage took {elapsed:.1f} s"
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Training hangs") and "10 checks, cheapest first" in lines[0]
    if shutil.which("nvidia-smi") is None:  # the machines here have no GPU: the GPU check must say so
        assert lines[1:3] == ["[1/10] GPU memory errors: skipped",
                              "    skipped: no NVIDIA GPU here (nvidia-smi not found)"]
    assert "    skipped: needs the PID of a training process: pass --pid" in lines
    assert "[4/10] Host memory and limits: ok (free -g; ulimit -a)" in lines
    assert lines[-1].endswith("skipped")


def test_triage_incident_draft_validates(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    expected = f"INC-{max(int(i[4:]) for i in ids(root, 'incident')) + 1:04d}"  # whatever the bundled records hold
    result = tooling("triage", "hang", "--incident", "demo-7b", cwd=root, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr == f"drafted incidents/{expected}.yaml\n"
    text = (root / "incidents" / f"{expected}.yaml").read_text()
    assert "symptom: hang" in text and "GPU memory errors: skipped" in text and "tooling triage hang" in text
    check = tooling("validate", "--strict", cwd=root)
    assert check.returncode == 0, check.stdout


def test_a_check_that_hangs_is_cut_off() -> None:
    began = time.monotonic()
    step = {"name": "stale mount", "command": "sleep 30", "look_for": "-", "clears": "storage", "cost_seconds": 1}
    result = run_step(1, step, pid=None, timeout=0.5)
    assert result.status == "timeout" and time.monotonic() - began < 5


def test_unknown_symptom_is_a_usage_error(tmp_path: Path) -> None:
    result = tooling("triage", "slowdown", cwd=_copy(tmp_path))
    assert result.returncode == 2 and "invalid choice: 'slowdown'" in result.stderr
