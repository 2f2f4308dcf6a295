"""Lines of raw-log sweep 12 (tests/corpus/heldout-10). fairseq lets its fp16 loss scale fall to
0.0001 before it raises 'Minimum loss scale reached', and a paste often starts after the fall: a
scale printed 0 (rounded to three decimals) or halved to 0.00024 is eight or more halvings under the
floor (1) where DeepSpeed, Megatron and apex stop, a collapse already over; a healthy fairseq run
sits at 1.0 and dips to 0.5. PaddlePaddle's launcher reports a worker that exited non-zero as
'Container failed !!!' and the container's line with its exit code and its own log, the launcher's
view of a failed child as torchrun's is."""
from __future__ import annotations

from pathlib import Path

import pytest

from scan_support import drafts, mode


def epoch(i: int, scale: float) -> str:
    """fairseq's epoch summary (the shape of facebookresearch/fairseq#1529's), its scale to three decimals."""
    return (f"| epoch {i:03d} | loss {4.0 - 0.01 * i:.3f} | nll_loss 2.204 | ppl 4.61 | wps 279460 | ups 3 | "
            f"num_updates {250 * i} | lr 0.000330319 | gnorm 0.635 | clip 0.000 | oom 0.000 | loss_scale "
            f"{scale:.3f} | wall {400 * i} | train_wall {380 * i}\n")


def note(scale: float) -> str:
    return f"2020-03-23 11:41:18 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale to: {scale!r}\n"


def test_a_scale_printed_zero_is_a_collapse_already_over(tmp_path: Path) -> None:
    (draft,) = drafts(tmp_path, epoch(28, 0.0) + "| epoch 028 | valid on 'valid' subset | loss 9.329 | best_loss 9.11817\n")
    assert (draft["failure_mode"], draft["logs"][0]["first_line"]) == ("training.fp16-overflow", 1)
    assert draft["evidence"][0].startswith("loss scale 0 at line 1 (step 7000): 0.003906 or below")


def test_a_scale_halved_far_under_the_floor_is_a_collapse(tmp_path: Path) -> None:
    text = "".join(epoch(i, 1.0) for i in range(1, 4)) + note(0.00048828125) + note(0.000244140625)
    (draft,) = drafts(tmp_path, text)
    assert (draft["failure_mode"], draft["logs"][0]["first_line"]) == ("training.fp16-overflow", 4)


@pytest.mark.parametrize("scales", [
    [1.0] * 20 + [0.5] + [1.0] * 5,  # heldout-7's healthy fairseq run: at 1.0, once 0.5
    [128.0, 64.0, 32.0] + [32.0] * 20,  # fairseq's initial 128 searching down on the first steps
    [0.0078125] * 20,  # seven halvings under the floor: not yet the depth
])
def test_a_scale_near_the_floor_drafts_nothing(tmp_path: Path, scales: list[float]) -> None:
    assert drafts(tmp_path, "".join(epoch(i + 1, s) for i, s in enumerate(scales))) == []


def test_a_bf16_runs_constant_scale_drafts_nothing(tmp_path: Path) -> None:
    text = "".join(f" iteration {i:>8}/  100000 | lm loss: {2.5 + 0.01 * (i % 7):.6E} | loss scale: 1.0 |\n"
                   for i in range(200))
    assert drafts(tmp_path, text) == []


@pytest.mark.parametrize("line", [
    "LAUNCH ERROR 2022-11-21 02:35:54,385 Container failed !!!",
    # the launcher's documentation (GPU cards taken by another job), and PaddleNLP's ERNIE runs
    "Container rank 6 status failed cmd ['/usr/bin/python', '-u', 'train.py'] code 1 log log/default.fxemxd.6.log",
    "Container rank 0 status failed cmd ['/opt/conda/envs/python35-paddle120-env/bin/python', '-u', "
    "'/home/aistudio/ERNIE/erniekit/launcher.py', 'train', 'examples/configs/ERNIE-4.5-0.3B/sft/yue_zh_sft_full.yaml'] "
    "code 1 log erniekit_dist_log/workerlog.0",
])
def test_paddles_launcher_on_a_failed_container_is_a_failed_child(line: str) -> None:
    assert mode(line) == "process.child-failed"


@pytest.mark.parametrize("line", [
    "LAUNCH INFO 2022-11-21 02:35:54,384 Pod failed",  # names no container
    "LAUNCH INFO 2023-04-06 22:26:19,689 max_restart: 3",
    "LAUNCH INFO 2025-09-27 09:32:31,869 ------------------------- ERROR LOG DETAIL -------------------------",
    "I1121 02:35:53.560647 3004662 tcp_store.cc:257] receive shutdown event and so quit from MasterDaemon run loop",
])
def test_paddles_launcher_lines_that_name_no_failed_container_draft_nothing(line: str) -> None:
    assert mode(line) is None
