"""A NaN or Inf written as a value that the run's next reading of the same quantity has finite again
is a step the fp16 loss scaler skipped, not a run gone to NaN (raw-log sweep 8: mmcv's averaged
``grad_norm: nan`` in a run's first interval, normal per its maintainer). Made-up logs: what must
draft and what must not (tooling.logs.transient)."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from tooling.logs.scan import scan_logs

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)


def mmcv(step: int, loss: str, norm: str) -> str:
    return (f"2021-11-22 01:{step // 100:02d}:00,000 - mmocr - INFO - Epoch [1][{step}/62598]\tlr: 1.000e-03, "
            f"time: 0.539, loss: {loss}, grad_norm: {norm}")


def trainer(step: int, loss: str, norm: str) -> str:
    """The HF Trainer's line: its epoch, to two decimals, tells how far the run is."""
    return f"{{'loss': {loss}, 'grad_norm': {norm}, 'learning_rate': 1e-05, 'epoch': {step / 100:.2f}}}"


def drafted(tmp_path: Path, *lines: str) -> list[tuple[str, int]]:
    log = tmp_path / "train.log"
    log.write_text("".join(f"{text}\n" for text in lines), encoding="utf-8")
    return [(d.mode.id, min(where.first for where in d.logs.values())) for d in scan_logs([log], now=NOW).drafts]


def test_a_nan_the_next_reading_has_finite_again_drafts_nothing(tmp_path: Path) -> None:
    assert drafted(tmp_path, mmcv(100, "1.9091", "nan"), mmcv(200, "0.9186", "3.9772")) == []
    assert drafted(tmp_path, trainer(10, "2.1", "inf"), "saving checkpoint", trainer(20, "2.0", "1.7")) == []


def test_a_nan_that_stays_or_ends_the_log_is_drafted(tmp_path: Path) -> None:
    assert drafted(tmp_path, trainer(10, "0.2051", "nan"), trainer(20, "0.0", "nan")) == [("training.nan", 1)]
    assert drafted(tmp_path, mmcv(100, "1.9", "3.1"), mmcv(200, "1.8", "nan")) == [("training.nan", 2)]


def test_a_finite_reading_of_another_rank_logger_or_an_earlier_step_is_no_recovery(tmp_path: Path) -> None:
    rollback = drafted(tmp_path, trainer(20, "2.1", "nan"), "restoring checkpoint of step 10", trainer(10, "2.3", "1.2"))
    assert rollback == [("training.nan", 1)]
    same_step = drafted(tmp_path, trainer(20, "2.1", "nan"), trainer(20, "2.2", "1.3"))  # another rank's line
    assert same_step == [("training.nan", 1)]
    ranks = drafted(tmp_path, "[rank1] step 20 | loss nan", "[rank0] step 20 | loss 2.2")
    assert ranks == [("training.nan", 1)]
    summary = drafted(tmp_path, mmcv(100, "1.9", "nan"), "mean grad_norm: 3.2 over the epoch")  # another logger
    assert summary == [("training.nan", 1)]
