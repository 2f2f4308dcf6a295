"""A loss scale halved on every step, several steps in a row, is a collapse in progress even far
above the floor of 1 (issue 25, sweep 7's trlx PPO run: 4096 down to 256 in four steps); a run's
first overflows, which halve a few times from where the scale was initialised and stop thousands
of times higher, and a scale that halves now and then and grows back, draft nothing."""
from __future__ import annotations

from pathlib import Path

from scan_support import drafts


def overflow(i: int, scale: float) -> str:
    return (f"[2026-11-02 03:{i // 60:02d}:{i % 60:02d},000] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] "
            f"OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {scale:g}, reducing to {scale / 2:g}\n")


def bar(i: int) -> str:
    return f"{i * 100 // 3200:>3}%|#   | {i}/3200 [14:{i % 60:02d}<7:36:46,  8.77s/it]\n"


def megatron(i: int, scale: float) -> str:
    return f" iteration {i:>8}/  100000 | lm loss: {2.5 + 0.01 * (i % 7):.6E} | loss scale: {scale:.1f} |\n"


def test_a_scale_halved_on_every_step_is_a_collapse_above_the_floor(tmp_path: Path) -> None:
    text = "".join(bar(i) for i in range(1, 60))
    scale = 8192.0
    for i in range(60, 65):  # each step overflows: one bar line, one overflow line
        text += bar(i) + overflow(i, scale)
        scale /= 2
    (draft,) = drafts(tmp_path, text)
    assert (draft["failure_mode"], draft["logs"][0]["first_line"]) == ("training.fp16-overflow", 59 + 5 * 2)
    assert draft["title"] == "Loss scale collapsed (fp16 gradient overflow) (loss scale 8192 to 256, halved every step)"
    assert draft["evidence"][0].startswith("loss scale halved on 5 steps in a row, from 8192 at line 61 to 256 at line 69")


def test_a_progress_line_that_prints_a_halved_scale_every_step(tmp_path: Path) -> None:
    text = "".join(megatron(i, 4096.0) for i in range(200))
    text += "".join(megatron(200 + k, 4096.0 / 2 ** (k + 1)) for k in range(5))  # 2048 ... 128
    (draft,) = drafts(tmp_path, text)
    assert (draft["failure_mode"], draft["logs"][0]["first_line"]) == ("training.fp16-overflow", 204)  # at 256


def test_a_runs_first_overflows_draft_nothing(tmp_path: Path) -> None:
    # DeepSpeed's older default: 2^32, halved 16 times in a row to 65536, then training goes on
    start = "".join(bar(i) + overflow(i, 2.0 ** (32 - i)) for i in range(16))
    assert drafts(tmp_path, start + "".join(bar(i) for i in range(16, 100))) == []
    # a scale initialised at or below 2^8 (fairseq's 128) searching down on its first steps
    low = "".join(f"| WARNING: overflow detected, setting loss scale to: {2.0 ** (6 - i)}\n" + bar(i) for i in range(4))
    assert drafts(tmp_path, low + "".join(bar(i) for i in range(4, 100))) == []
    # three halvings in a row to 512: still where runs keep it
    three = "".join(bar(i) + overflow(i, 4096.0 / 2 ** i) for i in range(3))
    assert drafts(tmp_path, "".join(bar(i) for i in range(50)) + three) == []


def test_a_scale_that_halves_now_and_then_and_grows_back_drafts_nothing(tmp_path: Path) -> None:
    """DeepSpeed's hysteresis: an overflow now and then, the scale doubled again after a window
    of clean steps; and halvings with clean steps between them are no streak."""
    text, scale = [], 1024.0
    for i in range(400):
        if i % 50 == 10:
            scale /= 2
        elif i % 50 == 40:
            scale *= 2
        text.append(megatron(i, scale))
    assert drafts(tmp_path, "".join(text)) == []
    spaced = "".join(bar(i) + (overflow(i, 4096.0 / 2 ** (i // 5)) if i % 5 == 0 else "") for i in range(25))
    assert drafts(tmp_path, spaced) == []
