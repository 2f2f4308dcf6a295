"""`tooling stacks` on saved py-spy dumps: grouping, the outlier, and the drafted incident."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

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
