"""A throughput written value first (MXNet's Speedometer, 'Speed: 95.71 samples/sec'), and a short
log whose speed falls to its end (raw-log sweep 13, tests/corpus/heldout-11: samples/sec at 90-98,
then 46.48, 46.48 and 23.47 on the paste's last lines). The throughput rule wants 30 progress lines
before it judges; a log too short for that drafts a fall below 0.7 of the median before it that
lasts its last 3 lines or more, none faster than the one before, two speeds at least."""
from __future__ import annotations

from pathlib import Path

import pytest

from scan_support import drafts
from tooling.logs.numbers import numbers


def speedometer(speeds: list[float]) -> str:
    """MXNet's lines, two a batch (one per metric), as zhreshold/mxnet-ssd prints them."""
    return "".join(f"Epoch[0] Batch [{20 * (i + 1)}]\tSpeed: {s:.2f} samples/sec\tTrain-{m}=0.62\n"
                   for i, s in enumerate(speeds) for m in ("CrossEntropy", "SmoothL1"))


@pytest.mark.parametrize(("line", "speed"), [
    ("Epoch[61] Batch [40]\tSpeed: 46.48 samples/sec\tTrain-CrossEntropy=0.631146", 46.48),
    ("INFO:root:Epoch[0] Batch [900]  Speed: 14762.29 samples/sec     Train-accuracy=0.950313", 14762.29),
    ("step 10 | 12,345 tokens/s | loss 2.31", 12345.0),
    ("tokens/s: 405,000 | loss 2.3", 405000.0),  # the key first, as before
])
def test_a_rate_written_before_its_unit_is_the_speed(line: str, speed: float) -> None:
    reading = numbers(line).speed
    assert reading is not None and reading.value == speed


@pytest.mark.parametrize("line", [
    "iteration 199/3999 | consumed samples: 4800 | global_batch_size: 24",  # a count, not a rate
    "Saving 1200 samples to /data/out",
    "step 5 | loss 2.1 | lr 0.0003 | 32 samples per batch",
])
def test_a_count_of_items_is_no_speed(line: str) -> None:
    assert numbers(line).speed is None


def modes(tmp_path: Path, speeds: list[float]) -> list[tuple[str, int]]:
    return [(d["failure_mode"], d["logs"][0]["first_line"]) for d in drafts(tmp_path, speedometer(speeds))]


def test_a_fall_that_lasts_to_a_short_logs_end_is_a_drop(tmp_path: Path) -> None:
    assert modes(tmp_path, [95.7, 94.5, 94.3, 90.3, 89.8, 98.0, 46.5, 23.5]) == [("training.throughput-drop", 13)]


@pytest.mark.parametrize("speeds", [
    [95.7, 94.5, 94.3, 90.3, 89.8, 98.0, 23.5],  # one slow batch at the end (two lines, one speed): a pause
    [95.7, 94.5, 94.3, 90.3, 89.8, 46.5, 23.5, 96.1],  # over before the end
    [95.7, 94.5, 94.3, 90.3, 89.8, 30.5, 46.5],  # faster again on the last: not still falling
    [23.5, 46.5, 90.3, 94.3, 95.7, 96.0, 97.1],  # a start's warm-up: slow first, then fast
    [46.5, 23.5, 20.1],  # nothing before to compare with
])
def test_what_a_short_logs_end_does_not_make_a_drop(tmp_path: Path, speeds: list[float]) -> None:
    assert modes(tmp_path, speeds) == []


def test_a_log_long_enough_for_the_baseline_is_the_throughput_rules(tmp_path: Path) -> None:
    # 32 progress lines: the main rule's baseline judges, and it wants 5 lines below 0.7
    assert modes(tmp_path, [95.0] * 14 + [46.5, 23.5]) == []
