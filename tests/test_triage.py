"""`tooling triage`: the ladder walked on this machine, bounded in time, skipping what cannot run."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from support import PROJECT, tooling
from tooling.diagnose.triage import _program, run_step, skip_reason
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
    result = tooling("triage", "plateau", cwd=_copy(tmp_path))
    assert (result.returncode, result.stderr) == (2, "tooling: error: triage: argument symptom: Expected one of: "
                                                     "['nan', 'hang', 'divergence', 'crash', 'checkpoint', 'slowdown'] "
                                                     "but received: 'plateau'\n")


@pytest.mark.parametrize("how", ["removed", "a folder in its place"])
def test_a_missing_ladder_names_the_file_it_expected(tmp_path: Path, how: str) -> None:
    root = _copy(tmp_path)
    ladder = root / "runbooks" / "ladders" / "nan.yaml"
    ladder.unlink()
    if how == "a folder in its place":
        ladder.mkdir()
    result = tooling("triage", "nan", cwd=root)
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "", "tooling: error: runbooks/ladders/nan.yaml: no such file; expected the nan ladder there (one file per "
               "symptom in runbooks/ladders/)\n")


def test_a_repository_that_takes_the_shipped_playbook_walks_the_shipped_ladder(tmp_path: Path) -> None:
    """A team's repository (its mkdocs.yml names the `playbook` plugin) has every shipped ladder
    it has no file of its own for (tests/site/test_team_repository.py: one it overrides)."""
    (tmp_path / "mkdocs.yml").write_text("site_name: team\nplugins:\n  - playbook\n", encoding="utf-8")
    result = tooling("triage", "nan", cwd=tmp_path)
    shipped = yaml.safe_load((PROJECT / "runbooks" / "ladders" / "nan.yaml").read_text(encoding="utf-8"))
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith(f"{shipped['title']}: {len(shipped['steps'])} checks")


RERUN = "    skipped: needs a new run of the training; start it by hand when the cheaper checks are clear"
NO_PID = "    skipped: needs the PID of a training process: pass --pid"
NO_JOB = "    skipped: needs the SLURM job: run it inside the job or set SLURM_JOB_ID=JOBID"


def _expected_skips(symptom: str) -> dict[int, str]:
    """{step number: its skip line} for the skips that do not depend on what this machine has."""
    ladder = yaml.safe_load((PROJECT / "runbooks" / "ladders" / f"{symptom}.yaml").read_text())
    skips = {}
    for number, step in enumerate(ladder["steps"], 1):
        needs = step.get("requires", [])
        if "rerun" in needs:
            skips[number] = RERUN
        elif needs == ["pid"]:
            skips[number] = NO_PID
        elif needs == ["slurm"] and shutil.which("sinfo") and "SLURM_JOB_ID" not in os.environ:
            skips[number] = NO_JOB
    return skips


@pytest.mark.parametrize("symptom", ["crash", "checkpoint", "slowdown"])
def test_new_ladders_run_what_they_can_and_skip_the_rest(tmp_path: Path, symptom: str) -> None:
    root = _copy(tmp_path)
    ladder = yaml.safe_load((root / "runbooks" / "ladders" / f"{symptom}.yaml").read_text())
    total = len(ladder["steps"])
    began = time.monotonic()
    result = tooling("triage", symptom, cwd=root, timeout=120)
    elapsed = time.monotonic() - began
    assert result.returncode == 0, result.stderr
    assert elapsed < 5 * total + 10, f"triage took {elapsed:.1f} s"  # every check bounded by its 5 s
    lines = result.stdout.splitlines()
    assert lines[0] == f"{ladder['title']}: {total} checks, cheapest first, on {socket.gethostname()}"
    heads = [line for line in lines if line.startswith("[")]
    assert [h.split(": ")[0] for h in heads] == [f"[{n}/{total}] {s['name']}" for n, s in enumerate(ladder["steps"], 1)]
    for number, skip in _expected_skips(symptom).items():
        at = lines.index(heads[number - 1])
        assert lines[at:at + 2] == [f"[{number}/{total}] {ladder['steps'][number - 1]['name']}: skipped", skip]
    skipped = sum(h.endswith(": skipped") for h in heads)
    assert lines[-1] == f"{total - skipped} checks ran, {skipped} skipped"
    assert skipped < total  # the cheap checks without requirements ran here


def test_a_check_that_ran_prints_what_to_do_next(tmp_path: Path) -> None:
    result = tooling("triage", "slowdown", cwd=_copy(tmp_path), timeout=120)
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("[5/13] NCCL settings in the environment: "))
    assert next(line for line in lines[at:] if line.startswith("    next: ")) == (
        "    next: A changed setting: restore it at the next checkpoint and compare throughput. Unchanged: step 6.")


def test_the_program_is_found_past_assignments_and_quoted_separators() -> None:
    assert _program("CUDA_LAUNCH_BLOCKING=1 TORCH_SHOW_CPP_STACKTRACES=1 torchrun train.py") == "torchrun"
    assert _program('python3 -c "import sys; print(sys.argv)" x | tail -n 1') == "python3"
    assert _program("dmesg -T | grep -i xid") == "dmesg"
    assert _program("(dd if=/dev/zero of=x; rm -f x)") is None  # a subshell: bash reports what is missing
    assert _program('"unbalanced') is None


def test_a_failed_stage_of_a_pipeline_fails_the_check() -> None:
    step = {"name": "logs", "command": "grep -h step_time missing/rank*.log | sort | tail -n 3", "look_for": "-",
            "clears": "host", "cost_seconds": 1}
    result = run_step(1, step, pid=None)
    assert (result.status, result.detail) == (
        "failed", "exit 2: grep: missing/rank*.log: No such file or directory")
    cut = run_step(2, {**step, "command": "yes | head -n 2"}, pid=None)  # yes dies of SIGPIPE: still answered
    assert (cut.status, cut.detail) == ("ok", "y\ny")


def test_a_python_check_that_needs_torch_is_skipped_where_torch_is_missing() -> None:
    step = {"name": "load", "command": "python3 -c 'import torch'", "look_for": "-", "clears": "framework",
            "cost_seconds": 1, "requires": ["torch"]}
    probe = subprocess.run(["python3", "-c", "import torch"], capture_output=True)
    expected = None if probe.returncode == 0 else "needs PyTorch (python3 cannot import torch)"
    assert skip_reason(step, pid=None) == expected


def test_triage_crash_drafts_a_crash_incident(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    result = tooling("triage", "crash", "--incident", "demo-7b", cwd=root, timeout=120)
    assert result.returncode == 0, result.stderr
    drafted = root / result.stderr.removeprefix("drafted ").strip()
    record = yaml.safe_load(drafted.read_text())
    assert (record["symptom"], record["actions"]) == ("crash", ["tooling triage crash --incident demo-7b"])
    assert record["timeline"][-1]["event"] == ("Full-size resume without the suspect node: skipped: needs a new run "
                                               "of the training; start it by hand when the cheaper checks are clear")
    check = tooling("validate", "--strict", cwd=root)
    assert (check.returncode, check.stdout) == (0, "")


def test_triage_finds_py_spy_where_stacks_does(repo: Path) -> None:
    """py-spy installed with the playbook sits beside its Python (the virtualenv's bin), off PATH
    unless the virtualenv is activated: `tooling stacks` used it, `tooling triage` said it was
    not installed here."""
    beside = Path(sys.executable).parent
    if not (beside / "py-spy").is_file():
        pytest.skip("py-spy is not installed beside this Python")
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                           if p and not (Path(p) / "py-spy").exists())  # as a shell that never activated it
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(0.5)  # its interpreter is up, for py-spy to read
        result = tooling("triage", "hang", "--pid", str(sleeper.pid), cwd=repo, env={"PATH": path})
    finally:
        sleeper.kill()
        sleeper.wait()
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[3:5] == ["[2/2] Stacks of all ranks: ok (py-spy dump --pid {pid})",
                          f"    | Process {sleeper.pid}: {sys.executable} -c import time; time.sleep(60)"]
    assert lines[-1] == "1 checks ran, 1 skipped"
