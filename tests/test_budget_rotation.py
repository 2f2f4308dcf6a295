"""Budget and rotation rules, with worked numbers."""
from __future__ import annotations

from pathlib import Path

import pytest

from support import PROJECT, tooling
from tooling.analysis.budget import compute


def test_large_run_budget_with_the_13x_buffer() -> None:
    b = compute({"gpu_hours": 277_700, "price_per_gpu_hour": 1.9, "currency": "USD", "first_run": False,
                 "checkpoint_storage_tb": 8, "storage_price_per_tb_month": 25, "months": 6,
                 "egress_tb": 3, "egress_price_per_tb": 20, "people": 4}, rotation_size=4)
    # 277,700 h x 1.9 = 527,630; x 1.3 = 685,919; storage 8 x 25 x 6 = 1,200; egress 3 x 20 = 60
    assert (b.gpu_cost, b.buffer_factor, b.gpu_with_buffer, b.storage, b.egress, b.total) == (
        527_630.0, 1.3, 685_919.0, 1_200.0, 60.0, 687_179.0)
    assert b.flags == []


def test_first_run_takes_15x_and_petabyte_checkpoints_are_flagged() -> None:
    b = compute({"gpu_hours": 100_000, "price_per_gpu_hour": 2.0, "first_run": True, "currency": "USD",
                 "checkpoint_storage_tb": 400, "storage_price_per_tb_month": 20, "months": 3,
                 "egress_tb": 50, "egress_price_per_tb": 90}, rotation_size=3)
    # 200,000 x 1.5 = 300,000; storage 400 x 20 x 3 = 24,000 (12% of 200,000); egress 4,500
    assert (b.gpu_with_buffer, b.storage, b.egress, b.total) == (300_000.0, 24_000.0, 4_500.0, 328_500.0)
    assert list(map(str, b.flags)) == ["checkpoint storage is 12% of the GPU cost, above 10%: prune old checkpoints "
                                       "or move them to colder storage"]


@pytest.mark.parametrize("storage_tb, flagged", [(10, None), (30, "inside the 5-10% band"), (45, "above 10%")])
def test_storage_share_bands(storage_tb: int, flagged: str | None) -> None:
    # GPU cost 5,000 h x 2 = 10,000; storage 10 TB x 10 x 2 months = 200 (2%), 30 x 10 x 2 = 600 (6%),
    # 45 x 10 x 3 months = 1,350 (13.5%)
    b = compute({"gpu_hours": 5_000, "price_per_gpu_hour": 2, "checkpoint_storage_tb": storage_tb,
                 "storage_price_per_tb_month": 10, "months": 2 if storage_tb < 45 else 3}, rotation_size=2)
    assert (flagged in str(b.flags[0])) if flagged else b.flags == []


def test_one_person_cannot_carry_a_24_7_run() -> None:
    b = compute({"gpu_hours": 10, "price_per_gpu_hour": 1, "people": 1}, rotation_size=1)
    assert list(map(str, b.flags)) == ["1 person on call: a 24/7 run needs at least 2 on the rotation (4 is better)"]


RUN = """kind: run
id: r
title: A run
owner: ana
state: running
oncall:
  members: [{members}]
  shifts:
{shifts}
updated_at: 2026-11-28T09:00:00+00:00
"""


def _shift(person: str, day: int, night: bool) -> str:
    hour = "20" if night else "08"
    return (f"    - person: {person}\n      start: 2026-12-{day:02d}T{hour}:00:00+00:00\n"
            f"      end: 2026-12-{day + (1 if night else 0):02d}T{'08' if night else '20'}:00:00+00:00\n"
            f"      night: {'true' if night else 'false'}\n")


def _validate(tmp_path: Path, members: str, shifts: str) -> list[str]:
    (tmp_path / "runbooks" / "runs").mkdir(parents=True)
    (tmp_path / "runbooks" / "runs" / "r.yaml").write_text(RUN.format(members=members, shifts=shifts))
    result = tooling("validate", cwd=tmp_path)
    assert result.returncode == 0
    return [line.split(": ", 1)[1] for line in result.stdout.splitlines()]


def test_rotation_of_one_is_flagged(tmp_path: Path) -> None:
    assert _validate(tmp_path, "ana", _shift("ana", 1, False)) == [
        "[rotation-too-small] warning: 1 person on the rotation; expected at least 2 for a 24/7 run (one person "
        "on call every day breaks within a month; 4 is better)"]


def test_one_person_holding_most_night_shifts_is_flagged(tmp_path: Path) -> None:
    shifts = _shift("ana", 1, True) + _shift("ben", 2, True) + _shift("ana", 3, True) + _shift("ben", 4, False)
    assert _validate(tmp_path, "ana, ben", shifts) == [
        "[night-pages-unbalanced] warning: ana holds 2 of 3 night shifts; expected nobody to carry more than "
        "half of the night pages"]


def test_balanced_rotation_passes(tmp_path: Path) -> None:
    shifts = _shift("ana", 1, True) + _shift("ben", 2, True) + _shift("cho", 3, True) + _shift("dan", 4, True)
    assert _validate(tmp_path, "ana, ben, cho, dan", shifts) == []


def test_budget_command_on_the_demo_run() -> None:
    result = tooling("budget", "demo-7b", cwd=PROJECT, env={"COLUMNS": "120"})
    assert result.returncode == 0
    assert "685,919" in result.stdout and "687,179" in result.stdout


@pytest.mark.parametrize("run", ["demo-99b", ""])
def test_an_unknown_run_lists_the_runs_with_a_budget(run: str) -> None:
    result = tooling("budget", run, cwd=PROJECT)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", f"tooling: error: RUN: Expected one of: ['demo-7b'] (the runs with a budget section) but received: "
               f"'{run}'\n")


def test_record_text_in_the_budget_is_shown_as_written_not_read_as_markup(tmp_path: Path) -> None:
    """rich reads "[/]" as its own markup: a run titled with brackets once ended in a MarkupError."""
    (tmp_path / "runbooks" / "runs").mkdir(parents=True)
    run = RUN.format(members="ana", shifts=_shift("ana", 1, False)).replace(
        "title: A run", 'title: "Run [/] [red]x[/red]"') + (
        "budget:\n  gpu_hours: 10\n  price_per_gpu_hour: 1\n  currency: \"[b]EUR\"\n  people: 1\n")
    (tmp_path / "runbooks" / "runs" / "r.yaml").write_text(run)
    result = tooling("budget", "r", cwd=tmp_path, env={"COLUMNS": "200"})
    assert (result.returncode, result.stderr) == (0, "")
    assert "Budget of Run [/] [red]x[/red] (r)" in result.stdout and "Cost ([b]EUR)" in result.stdout
    assert "warning: 1 person on call: a 24/7 run needs at least 2 on the rotation (4 is better)" in result.stdout


def test_a_run_named_where_no_run_has_a_budget_says_so(tmp_path: Path) -> None:
    (tmp_path / "runbooks" / "runs").mkdir(parents=True)
    result = tooling("budget", "demo-7b", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "tooling: error: RUN: no run page has a budget section yet but received: 'demo-7b'; expected a run "
               "record (runbooks/runs/) with a budget: section\n")
