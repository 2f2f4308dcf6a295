"""`handled_by`: the automation that handled a failure without a person, an id of the automation
catalogue; filed from log lines an automation signs (`[handled_by: ID]`, as the loss-spike guard
does) when every line of the failure carries the same one, and checked by `tooling validate`."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from support import snapshot, tooling
from tooling.records.load import load_file
from tooling.resilience.nan_guard import NaNGuard

NOW = "2026-11-29T12:00:00+00:00"
ROLLBACK = ("loss-spike guard: step 610: loss spike detected for 11 steps (patience 10): loss 7.822, 39.6 deviations "
            "above its median 1.011 (deviation 0.172); rolling back to the newest checkpoint at or before step 590, "
            "skipping batches 590-610 [handled_by: divergence-rollback]")
RECOVERED = ("loss-spike guard: step 603: not a persistent loss spike: back within 3 deviations of its median after 3 "
             "steps (patience 10; it peaked 828.5 deviations above the median); loss 1.025 "
             "[handled_by: divergence-rollback]")
HALT = ("loss-spike guard: step 900: loss spike detected for 11 steps (patience 10): loss 9.1, 50.2 deviations above "
        "its median 1.0 (deviation 0.16); the 3rd remedy within 2000 steps: halting, a person is needed")


def watched(repo: Path, tmp_path: Path, *lines: str) -> dict[str, object]:
    """The one incident `tooling watch --once` files from a log of ``lines``."""
    (repo / "train.log").write_text("".join(line + "\n" for line in lines))
    result = tooling("--now", NOW, "watch", "train.log", "--run", "demo-7b", "--once", "--state",
                     str(tmp_path / "offsets.json"), cwd=repo)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    [created] = result.stdout.splitlines()
    path = created.split(": ", 1)[0].removeprefix("created ")
    data = load_file(str(repo / path)).data
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("lines, mode, automation", [
    ([ROLLBACK], "training.divergence", "divergence-rollback"),
    ([RECOVERED], "training.loss-spike-recovered", "divergence-rollback"),
    ([ROLLBACK, HALT], "training.divergence", None),  # the guard gave up: a person handles it
    ([ROLLBACK.replace("divergence-rollback", "a-robot-of-nowhere")], "training.divergence", None),
])
def test_watch_files_the_automation_every_line_of_the_failure_names(repo: Path, tmp_path: Path, lines: list[str],
                                                                     mode: str, automation: str | None) -> None:
    data = watched(repo, tmp_path, "step 599 | loss 0.91", *lines)
    assert (data["failure_mode"], data.get("handled_by")) == (mode, automation)
    validated = tooling("validate", cwd=repo)  # (warned: the small corpus has no ladder for a divergence)
    assert validated.returncode == 0 and "handled_by" not in validated.stdout, validated.stdout


@pytest.mark.parametrize("policy, handled", [("skip", "nan-guard"), ("rollback", "nan-guard"), ("halt", None)])
def test_the_nan_guards_own_line_is_filed_as_a_nan_handled_by_it_unless_it_halts(
        repo: Path, tmp_path: Path, policy: str, handled: str | None) -> None:
    guard = NaNGuard(policy=policy, max_bad_steps=1)
    verdict = guard.check(412, torch.tensor(math.nan), grad_norm=math.nan)
    line = guard.message(verdict)
    assert line is not None and guard.message(guard.check(413, torch.tensor(1.0), grad_norm=0.5)) is None
    data = watched(repo, tmp_path, "step 411 | loss 0.91", f"2026-11-29T11:59:00+0000 WARNING train: {line}")
    assert (data["failure_mode"], data.get("handled_by")) == ("training.nan", handled)


def test_an_automation_the_catalogue_does_not_have_is_an_error(repo: Path) -> None:
    path = repo / "incidents" / "INC-0002.yaml"
    path.write_text(path.read_text() + "handled_by: divergence-rolback\n")
    line = len(path.read_text().splitlines())
    before = snapshot(repo)
    result = tooling("validate", cwd=repo)
    assert (result.returncode, result.stdout) == (1, (
        f"incidents/INC-0002.yaml:{line}:13: [unknown-automation] handled_by 'divergence-rolback' is not in the "
        f"automation catalogue; did you mean 'divergence-rollback'?\n"))
    assert snapshot(repo) == before
    path.write_text(path.read_text().replace("divergence-rolback", "nan-guard"))
    assert tooling("validate", "--strict", cwd=repo).returncode == 0  # a known one: not even a warning
