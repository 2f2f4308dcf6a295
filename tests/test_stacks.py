"""`tooling stacks` on saved py-spy dumps: grouping, the outlier, and the drafted incident."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from support import CORPUS, tooling
from tooling.diagnose.stacks import Frame, RankStack, outliers, parse_dump

DUMPS = sorted((CORPUS / "stacks").iterdir())


def test_text_and_json_dumps_parse_to_the_same_main_thread() -> None:
    from_json = parse_dump((CORPUS / "stacks" / "rank-0.json").read_text())
    from_text = parse_dump((CORPUS / "stacks" / "rank-4.txt").read_text())
    assert from_json == from_text
    assert from_json[0] == Frame("all_reduce", "/venv/torch/distributed/distributed_c10d.py", 3252)


def test_report_names_the_outlier_and_where_it_leaves_the_majority() -> None:
    result = tooling("stacks", "--dumps", *map(str, DUMPS), cwd=CORPUS)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "5 ranks, 2 distinct stacks",
        "  ranks 0, 2, 3, 4 (4): all_reduce (distributed_c10d.py:3252) <- all_reduce_gradients (train.py:41) "
        "<- train_step (train.py:52) <- main (train.py:65)",
        "  rank 1 (1): stall_in_data_loading (train.py:36) <- train_step (train.py:47) <- main (train.py:65) "
        "<- <module> (train.py:71)",
        "outlier: rank 1, which leaves the majority at depth 2: it is in train_step (train.py:47), "
        "the others in train_step (train.py:52)",
    ]
    data = json.loads(tooling("stacks", "--json", "--dumps", *map(str, DUMPS), cwd=CORPUS).stdout)
    assert [o["rank"] for o in data["outliers"]] == ["1"]


def test_no_outlier_when_every_rank_agrees() -> None:
    same = (Frame("all_reduce", "c10d.py", 1), Frame("main", "train.py", 9))
    assert outliers([RankStack(str(r), same) for r in range(4)]) == []


def test_two_outliers_in_one_class() -> None:
    major = (Frame("all_reduce", "c10d.py", 1), Frame("step", "t.py", 5), Frame("main", "t.py", 9))
    odd = (Frame("read", "nfs.py", 3), Frame("step", "t.py", 4), Frame("main", "t.py", 9))
    found = outliers([RankStack("0", major), RankStack("1", odd), RankStack("2", major),
                      RankStack("3", odd), RankStack("4", major)])
    assert [(o.rank, o.depth, str(o.frame)) for o in found] == [("1", 1, "step (t.py:4)"), ("3", 1, "step (t.py:4)")]


def test_incident_drafted_from_the_stacks_validates(repo: Path) -> None:
    dumps = repo / "dumps"
    shutil.copytree(CORPUS / "stacks", dumps)
    result = tooling("stacks", "--dumps", *sorted(str(p) for p in dumps.iterdir()), "--incident", "demo-7b", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "drafted incidents/INC-0003.yaml\n"
    text = (repo / "incidents" / "INC-0003.yaml").read_text()
    assert "title: Rank 1 hung in train_step (train.py:47); the other 4 ranks wait in train_step (train.py:52)" in text
    assert "symptom: hang" in text and "  - 1\n" in text and "stall_in_data_loading (train.py:36)" in text
    assert tooling("validate", "--strict", cwd=repo).returncode == 0


def test_pid_without_children_is_a_usage_error(tmp_path: Path) -> None:
    lonely = subprocess.Popen(["sleep", "30"])
    try:
        result = tooling("stacks", "--pid", str(lonely.pid), cwd=tmp_path)
    finally:
        lonely.kill()
        lonely.wait()
    assert result.returncode == 2
    assert result.stderr == (f"tooling: error: --pid {lonely.pid}: no child processes; expected the PID of "
                             "torchrun (or use --pids)\n")


FRAME = '[{"pid": 1, "os_thread_id": 1, "frames": [{"name": "f", "filename": "t.py", "line": %s}]}]'
NOT_A_DUMP = "expected the text or --json output of py-spy dump"
BROKEN_DUMPS = [  # each once ended in an internal error (RecursionError, OverflowError, ValueError)
    ("deep.json", "[" * 100_000 + "]" * 100_000, f"deep.json:1:1: JSON nested too deeply; {NOT_A_DUMP}"),
    ("infinite.json", FRAME % "1e999", f"infinite.json:1:1: a frame without name, filename and line; {NOT_A_DUMP}"),
    ("fraction.json", FRAME % "2.5", f"fraction.json:1:1: a frame without name, filename and line; {NOT_A_DUMP}"),
    ("long.txt", "Thread 0x1 (idle)\n    f (t.py:" + "9" * 5000 + ")\n",
     f"long.txt: no thread with Python frames; {NOT_A_DUMP}"),
    ("long-faulthandler.txt", 'Thread 0x1 (most recent call first):\n  File "t.py", line ' + "9" * 5000 + " in f\n",
     f"long-faulthandler.txt: no thread with Python frames; {NOT_A_DUMP}"),
]


@pytest.mark.parametrize("name, text, message", BROKEN_DUMPS, ids=[b[0] for b in BROKEN_DUMPS])
def test_a_dump_with_absurd_numbers_or_nesting_is_a_one_line_error(tmp_path: Path, name: str, text: str,
                                                                   message: str) -> None:
    (tmp_path / name).write_text(text)
    result = tooling("stacks", "--dumps", name, cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", f"tooling: error: {message}\n")


def _free_pid() -> int:
    """A PID no process has now (the kernel's largest is below 2**22)."""
    return next(pid for pid in range(4_194_303, 0, -1) if not Path(f"/proc/{pid}").exists())


def test_processes_that_are_not_there_are_named_in_one_line(tmp_path: Path) -> None:
    pid = _free_pid()
    cases = [
        (["--pid", "0"], "--pid 0: no child processes; expected the PID of torchrun (or use --pids)"),
        (["--pids", f"{pid}"], f"--pids: no process {pid} on this machine; expected the PIDs of running ranks"),
        (["--slurm-job", ""], "--slurm-job '': no process with that SLURM_JOB_ID and a RANK on this machine; "
                              "expected a job with ranks running here"),
    ]
    for args, message in cases:
        result = tooling("stacks", *args, cwd=tmp_path, env={"RUST_BACKTRACE": "1"})
        assert (result.returncode, result.stdout, result.stderr) == (2, "", f"tooling: error: {message}\n"), args


def test_a_py_spy_failure_is_one_line_without_its_backtrace(tmp_path: Path) -> None:
    """py-spy prints a Rust backtrace under RUST_BACKTRACE=1; the error keeps its first line."""
    with subprocess.Popen(["sleep", "60"]) as sleeper:  # a process, but not a Python one
        try:
            result = tooling("stacks", "--pids", str(sleeper.pid), cwd=tmp_path, env={"RUST_BACKTRACE": "1"})
        finally:
            sleeper.kill()
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "", f"tooling: error: py-spy dump --pid {sleeper.pid} failed: Error: Failed to find python version from "
               "target process\n")
