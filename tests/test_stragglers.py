"""Stragglers (issue 23, item 5): the slow rank and its node named from per-rank step times,
filed as a throughput drop with the node as evidence; no one named on a healthy run.

The scoring's properties run on made-up step times (:func:`replay` is the detector's decisions
without the processes); the real runs start three ranks over gloo, one process per emulated node
as srun starts them (each with its SLURMD_NODENAME), and read their log with `tooling watch`.
"""
from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from support import PROJECT, tooling
from tooling.resilience.stragglers import Straggler, StragglerDetector, relative_scores, replay

LAB = PROJECT / "labs" / "06-spare-nodes" / "stragglers.py"
EVERY, THRESHOLD, PATIENCE = 10, 0.75, 3  # the detector's defaults

# Step times in whole microseconds (as seconds): sums and medians of them are exact, so a score
# on the threshold is on it, not a rounding away from it.
LONGEST = 2_000_000  # 2 s
MICROS = st.integers(0, LONGEST)


@st.composite
def healthy(draw: st.DrawFn, shortest: int = 0) -> list[list[float]]:
    """Every rank's step times, each report's the same times in another order on every rank:
    ranks alike, whatever the times do from one report to the next."""
    ranks, reports = draw(st.integers(2, 5)), draw(st.integers(PATIENCE, PATIENCE + 2))
    timings: list[list[float]] = [[] for _ in range(ranks)]
    for _ in range(reports):
        times = draw(st.lists(st.integers(shortest, LONGEST),
                              min_size=EVERY, max_size=EVERY))
        for rank in range(ranks):
            timings[rank] += [t / 1e6 for t in draw(st.permutations(times))]
    return timings


@given(healthy(), st.integers(0, 10_000_000))
def test_the_same_delay_added_to_every_rank_names_no_one(timings: list[list[float]], delay: int) -> None:
    assert replay(timings) == []
    assert replay([[(round(t * 1e6) + delay) / 1e6 for t in times] for times in timings]) == []


@given(st.integers(2, 4).flatmap(lambda ranks: st.lists(st.lists(MICROS, min_size=40, max_size=40),
                                                        min_size=ranks, max_size=ranks)),
       st.integers(1, 10_000_000))
def test_a_delay_added_to_every_rank_never_names_one_that_was_not(timings: list[list[int]], delay: int) -> None:
    """Whatever the times: a common delay only brings every score towards 1, so a rank is below
    the threshold at fewer reports (and may be named later, if still named)."""
    before = {s.rank for s in replay([[t / 1e6 for t in times] for times in timings])}
    after = {s.rank for s in replay([[(t + delay) / 1e6 for t in times] for times in timings])}
    assert after <= before


@given(healthy(shortest=1), st.data())  # a step of no time is no slower multiplied
def test_one_rank_slower_by_more_than_the_threshold_says_is_named_after_its_patience(
        timings: list[list[float]], data: st.DataObject) -> None:
    slow = data.draw(st.integers(0, len(timings) - 1))
    factor = data.draw(st.floats(1 / THRESHOLD * 1.000001, 100))
    timings[slow] = [t * factor for t in timings[slow]]
    named = replay(timings, nodes=[f"n{r}" for r in range(len(timings))])
    assert [(s.rank, s.node, s.first_step, s.last_step) for s in named] == [
        (slow, f"n{slow}", 0, PATIENCE * EVERY - 1)]
    assert named[0].score < THRESHOLD


@given(healthy(), st.data())
def test_one_rank_slower_by_less_than_the_threshold_says_is_not_named(
        timings: list[list[float]], data: st.DataObject) -> None:
    slow = data.draw(st.integers(0, len(timings) - 1))
    factor = data.draw(st.floats(1, 1 / THRESHOLD * 0.999999))
    timings[slow] = [t * factor for t in timings[slow]]
    assert replay(timings) == []


def test_a_rank_that_comes_back_is_forgotten_and_named_again_when_it_falls_behind_again() -> None:
    fast, slow = [0.010] * EVERY, [0.030] * EVERY
    rank2 = slow * PATIENCE + fast + slow * (PATIENCE - 1) + slow
    named = replay([fast * (2 * PATIENCE + 1)] * 2 + [rank2])
    assert [(s.rank, s.first_step, s.last_step, round(s.score, 3)) for s in named] == [
        (2, 0, 29, 0.333), (2, 40, 69, 0.333)]


def test_a_noisy_report_between_slow_ones_starts_the_count_again() -> None:
    fast, slow = [0.010] * EVERY, [0.030] * EVERY
    assert replay([fast * 6, fast * 6, slow * 2 + fast + slow * 2 + fast]) == []


def test_two_ranks_the_slow_one_is_named_however_the_median_would_split() -> None:
    assert [s.rank for s in replay([[0.01] * 30, [0.03] * 30])] == [1]
    assert relative_scores([0.01, 0.03]) == [1.0, pytest.approx(1 / 3)]


def test_a_rank_without_usable_times_is_not_slow_and_the_steps_still_count() -> None:
    nan = float("nan")
    assert replay([[0.01] * 30, [nan, -1.0, float("inf")] * 10, [0.01] * 30]) == []
    detector = StragglerDetector(every=3)  # no process group: it records, compares with no one
    assert [detector.record(t) for t in (0.01, nan, 0.02)] == [[], [], []] and detector.steps == 3
    with detector.timed():
        pass
    assert detector.steps == 4 and detector.stragglers == {} and detector.scores is None


@pytest.mark.parametrize("settings", [{"every": 0}, {"patience": 0}, {"threshold": 1.0}, {"threshold": 0.0}])
def test_settings_out_of_their_range_are_refused_when_the_detector_is_made(settings: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="expected every and patience of 1 or more and a threshold between 0 and 1"):
        StragglerDetector(**settings)  # type: ignore[arg-type]


def test_the_line_a_straggler_logs_is_filed_as_a_throughput_drop_with_its_rank_and_node(repo: Path) -> None:
    straggler = Straggler(rank=5, node="gpu-node-011", score=0.4, median=0.25, reference=0.1, first_step=100,
                          last_step=129)
    line = straggler.line(THRESHOLD, PATIENCE)
    assert line == ("straggler: rank=5 node=gpu-node-011 score=0.40 (median 250 ms against 100 ms for the median "
                    "rank; below 0.75 for 3 reports in a row, steps 100-129)")
    log = repo / "job.log"
    log.write_text(f"2026-11-02T03:14:00+0000 WARNING tooling.resilience.stragglers: {line}\n")
    result = tooling("scan", "--json", str(log), cwd=repo)
    assert result.returncode == 0, result.stderr
    [draft] = json.loads(result.stdout)
    assert (draft["failure_mode"], draft["symptom"], draft["nodes"], draft["ranks"]) == (
        "training.throughput-drop", "slowdown", ["gpu-node-011"], [5])


def _lab_module() -> object:
    spec = importlib.util.spec_from_file_location("lab6_stragglers", LAB)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_LAB = _lab_module()  # lab 6's stragglers.py, loaded once (it is a script, not a package's module)


@given(node=st.sampled_from(["n1", "n2", "n3"]), step=st.integers(0, 1000), slow_from=st.integers(0, 1000),
       factor=st.sampled_from(["1.5", "2", "3"]))
def test_the_node_slowed_on_purpose_works_longer_from_its_step_on_and_no_other_node_does(
        node: str, step: int, slow_from: int, factor: str) -> None:
    """What lab 6's train.py and stragglers.py sleep for a step's work: SLOW_FACTOR times as long
    on the node SLOW_NODE names, from step SLOW_FROM on; as long as asked everywhere else."""
    work_seconds = _LAB.work_seconds  # type: ignore[attr-defined]
    environ = {"SLOW_NODE": "n2", "SLOW_FROM": str(slow_from), "SLOW_FACTOR": factor}
    with pytest.MonkeyPatch.context() as patch:
        for key, value in environ.items():
            patch.setenv(key, value)
        slowed = node == "n2" and step >= slow_from
        assert work_seconds(node, 0.05, step) == (0.05 * float(factor) if slowed else 0.05)
        patch.delenv("SLOW_NODE")
        assert work_seconds(node, 0.05, step) == 0.05


# -- real runs: three ranks over gloo, one process per emulated node ---------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_ranks(log: Path, steps: int, slow_node: str | None, ranks: int = 3) -> dict[str, object]:
    """Lab 6's ``stragglers.py`` on ``ranks`` processes, rank r on node n<r>, as srun starts one task
    per node; all their output in ``log``, as a job's. Rank 0's summary line."""
    # 20 ms of work a step, not the script's 5 ms: on two cores busy with other tests a woken rank
    # waits some milliseconds for a core, which at 5 ms hid a 2x slowdown (CI, stop 34)
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port()), "WORLD_SIZE": str(ranks),
           "OMP_NUM_THREADS": "1", "PYTHONPATH": str(PROJECT), "STEP_SECONDS": "0.02"}
    env.pop("SLOW_NODE", None)
    if slow_node:
        env["SLOW_NODE"] = slow_node
    with log.open("ab") as out:
        processes = [subprocess.Popen([sys.executable, str(LAB), "--steps", str(steps)], stdout=out, stderr=out,
                                      env={**env, "RANK": str(rank), "LOCAL_RANK": "0", "SLURMD_NODENAME": f"n{rank}"})
                     for rank in range(ranks)]
        try:
            codes = [p.wait(timeout=300) for p in processes]
        finally:
            for p in processes:
                if p.poll() is None:
                    p.kill()
                    p.wait()
    text = log.read_text()
    assert codes == [0] * ranks, text
    return json.loads(next(line for line in text.splitlines() if line.startswith("{")))


def _incidents(repo: Path) -> list[dict[str, object]]:
    return [yaml.safe_load(p.read_text()) for p in sorted((repo / "incidents").glob("INC-*.yaml"))]


@pytest.mark.slow
def test_a_slowed_node_is_named_within_50_steps_and_filed_as_a_throughput_drop_with_its_node(
        repo: Path, tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    summary = run_ranks(log, 50, "n1")
    assert [(n["rank"], n["node"]) for n in summary["named"]] == [(1, "n1")], summary  # type: ignore[index]
    assert summary["named"][0]["step"] < 50  # type: ignore[index]
    lines = [line for line in log.read_text().splitlines() if "straggler:" in line]
    assert len(lines) == 1 and " straggler: rank=1 node=n1 score=" in lines[0], lines
    before = _incidents(repo)
    result = tooling("watch", str(log), "--run", "demo-7b", "--once", "--state", str(tmp_path / "state"), cwd=repo)
    assert result.returncode == 0, result.stderr
    [filed] = [i for i in _incidents(repo) if i not in before]
    assert result.stdout == f"created incidents/{filed['id']}.yaml: Throughput dropped (straggler) on rank 1 (n1)\n"
    assert (filed["failure_mode"], filed["symptom"], filed["nodes"], filed["ranks"], filed["signatures"]) == (
        "training.throughput-drop", "slowdown", ["n1"], [1], lines)


@pytest.mark.slow
def test_500_healthy_steps_name_no_one_and_file_nothing(repo: Path, tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    summary = run_ranks(log, 500, None)
    assert summary == {"steps": 500, "named": []}
    assert "straggler" not in log.read_text()
    result = tooling("watch", str(log), "--run", "demo-7b", "--once", "--state", str(tmp_path / "state"), cwd=repo)
    assert (result.returncode, result.stdout) == (0, ""), result.stderr
