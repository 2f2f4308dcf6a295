"""A loss that explodes from the one reading a paste shows before it (raw-log sweep 13,
tests/corpus/heldout-11): TF Object Detection's loss 0.1442 at step 408, then 25237.9, 75835.3,
28575.2, ... 1216893.1. With one reading before, a jump of BLOWUP times is a divergence only when it
holds LEAP times that reading for LEAP_HOLD readings of distinct steps: one reading is a weak
baseline, and a jump that falls back is a spike."""
from __future__ import annotations

from pathlib import Path

import pytest

from scan_support import drafts


def tf(step: int, loss: float) -> str:
    """slim's learning.py line, printed twice as tensorflow's logger and absl each write it."""
    body = f"global step {step}: loss = {loss:.4f} (0.273 sec/step)"
    return f"INFO:tensorflow:{body}\nI0422 07:10:05.258542 140486560917376 learning.py:507] {body}\n"


def modes(tmp_path: Path, losses: list[float]) -> list[tuple[str, int]]:
    # the paste starts on the second of step 408's two lines, as the sweep's excerpt does
    text = "".join(tf(408 + i, loss) for i, loss in enumerate(losses)).split("\n", 1)[1]
    return [(d["failure_mode"], d["logs"][0]["first_line"]) for d in drafts(tmp_path, text)]


def test_an_explosion_from_the_first_reading_that_holds_is_a_divergence(tmp_path: Path) -> None:
    assert modes(tmp_path, [0.1442, 25237.8984, 75835.2812, 28575.1914, 134869.8906]) == [("training.divergence", 2)]


@pytest.mark.parametrize("losses", [
    [0.1442, 25237.8984, 0.1391, 0.1377, 0.1402],  # one reading so high and back: a spike
    [0.1442, 25237.8984, 75835.2812],  # held for two readings only: the log ends before it is a level
    [0.1442, 14.42, 14.9, 15.3, 14.1],  # a hundredfold, held: short of BLOWUP from one reading
    [8.1, 7.9, 7.7, 7.4, 7.2],  # a loss that falls
])
def test_what_a_single_reading_does_not_make_a_divergence(tmp_path: Path, losses: list[float]) -> None:
    assert modes(tmp_path, losses) == []
