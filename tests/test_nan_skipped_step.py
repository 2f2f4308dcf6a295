"""A NaN or Inf in a reading that sums up an interval of steps, which the next reading of the same
quantity has finite again, is a step of it the fp16 loss scaler skipped, not a run gone to NaN
(raw-log sweep 8: mmcv's averaged ``grad_norm: nan`` in a run's first interval, normal per its
maintainer). Made-up logs: what must draft and what must not (tooling.logs.transient)."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from tooling.logs.scan import scan_logs

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)


def mmcv(done: int, loss: str, norm: str) -> str:
    """mmcv's line: the averages of the interval of iterations up to ``done``."""
    return (f"2021-11-22 01:{done // 100:02d}:00,000 - mmocr - INFO - Epoch [1][{done}/62598]\tlr: 1.000e-03, "
            f"time: 0.539, loss: {loss}, grad_norm: {norm}")


def swift(done: int, loss: str, norm: str) -> str:
    return f'{{"loss": {loss}, "grad_norm": {norm}, "global_step/max_steps": "{done}/11043"}}'


def drafted(tmp_path: Path, *lines: str) -> list[tuple[str, int]]:
    log = tmp_path / "train.log"
    log.write_text("".join(f"{text}\n" for text in lines), encoding="utf-8")
    return [(d.mode.id, min(where.first for where in d.logs.values())) for d in scan_logs([log], now=NOW).drafts]


def test_an_intervals_nan_the_next_reading_has_finite_again_drafts_nothing(tmp_path: Path) -> None:
    assert drafted(tmp_path, mmcv(100, "1.9091", "nan"), mmcv(200, "0.9186", "3.9772")) == []
    assert drafted(tmp_path, swift(8280, "2.23", "NaN"), "saving checkpoint", swift(8290, "2.20", "1.7")) == []


def test_a_nan_that_stays_or_ends_the_log_is_drafted(tmp_path: Path) -> None:
    assert drafted(tmp_path, mmcv(100, "1.9", "nan"), mmcv(200, "0.0", "nan")) == [("training.nan", 1)]
    assert drafted(tmp_path, mmcv(100, "1.9", "3.1"), mmcv(200, "1.8", "nan")) == [("training.nan", 2)]


def test_a_steps_own_nan_is_drafted_whatever_follows(tmp_path: Path) -> None:
    steps = drafted(tmp_path, "step 60 | loss 3.2 | gnorm nan", "step 61 | loss 3.2 | gnorm 1.1")
    assert steps == [("training.nan", 1)]
    unknown = drafted(tmp_path, "{'loss': 2.1, 'grad_norm': nan, 'epoch': 0.53}", "{'loss': 2.0, 'grad_norm': 1.2, "
                      "'epoch': 0.54}")  # no count of steps: no interval known
    assert unknown == [("training.nan", 1)]


def test_a_finite_reading_of_another_rank_logger_or_an_earlier_step_is_no_recovery(tmp_path: Path) -> None:
    rollback = drafted(tmp_path, swift(8280, "2.1", "nan"), "restoring checkpoint", swift(8200, "2.3", "1.2"))
    assert rollback == [("training.nan", 1)]
    ranks = drafted(tmp_path, "[rank1] step 200 | loss nan", "[rank0] step 200 | loss 2.2")
    assert ranks == [("training.nan", 1)]
    summary = drafted(tmp_path, mmcv(100, "1.9", "nan"), "mean grad_norm: 3.2 over 200/62598")  # another logger
    assert summary == [("training.nan", 1)]
