"""Lines of raw-log sweep 11 (tests/corpus/heldout-9): Megatron's iteration line prints a loss only
when its average over the interval is above zero, so a NaN loss on an iteration it did not skip
shows only as the loss missing (Megatron-DeepSpeed#434: "the only way we can judge this issue ...
is no lm loss print"); a line that skipped its iterations (an fp16 overflow at the start) leaves
the loss out too, and says no NaN, nor does a line that prints its loss. SLURM's step cancelled
"DUE TO TASK FAILURE" (one task exited non-zero, srun killed the others) is the scheduler's view of a
failed child, as torchrun's is; its other reasons are their own modes."""
from __future__ import annotations

import pytest

from scan_support import mode


NO_LOSS = (" iteration        9/      10 | consumed samples:          108 | consumed tokens:       442368 | elapsed "
           "time per iteration (ms): 1979.2 | learning rate: 4.219E-07 | global batch size:    12 | loss scale: 1.0 | "
           "actual seqlen:  4096 | number of skipped iterations:   0 | number of nan iterations:   0 | samples per "
           "second: 6.063 | tokens per gpu per second (tgs): 2069.506 | TFLOPs: 127.00 |")


@pytest.mark.parametrize("line", [
    NO_LOSS,
    # Megatron-LM's own fields, a grad norm between: epfLLM/Megatron-LLM#33's first line without its loss,
    # which the thread's window cuts after "loss scale: 1.0 | gr" (its grad norm and counters made up here)
    "iteration     3385/    8000 | consumed samples:       216640 | elapsed time per iteration (ms): 7624.3 | "
    "learning rate: 6.676E-06 | global batch size:    64 | loss scale: 1.0 | grad norm: 0.744 | "
    "number of skipped iterations:   0 | number of nan iterations:   0 |",
])
def test_a_megatron_line_that_skipped_nothing_and_prints_no_loss_is_a_nan(line: str) -> None:
    assert mode(line) == "training.nan"


@pytest.mark.parametrize("line", [
    # every iteration of the interval skipped (the loss scale still settling): no loss to print
    " iteration       10/ 1000000 | consumed samples:           40 | elapsed time per iteration (ms): 356.2 | "
    "learning rate: 0.000E+00 | global batch size:     4 | loss scale: 8388608.0 | number of skipped iterations:  "
    "10 | number of nan iterations:   0 |",
    # the loss printed, the losses of other heads too
    "[2026-05-28 22:26:20] iteration       29/    6069 | consumed samples:        14848 | elapsed time per iteration "
    "(ms): 26813.0 | learning rate: 5.800000E-05 | global batch size:   512 | lm loss: 8.716962E-01 | "
    "mtp_1 loss: 1.115410E+00 | loss scale: 1.0 | grad norm: 0.852 | number of skipped iterations:   0 | "
    "number of nan iterations:   0 |",
    "iteration     3383/    8000 | consumed samples:       216512 | elapsed time per iteration (ms): 7613.1 | "
    "learning rate: 6.680E-06 | global batch size:    64 | lm loss: 7.334521E-01 | loss scale: 1.0 | grad norm: "
    "0.752 | number of skipped iterations:   0 | number of nan iterations:   0 |",
])
def test_a_megatron_line_with_its_loss_or_its_iterations_skipped_is_no_nan(line: str) -> None:
    assert mode(line) is None


def test_a_slurm_step_cancelled_for_a_task_failure_is_a_failed_child() -> None:
    assert mode("[2026-04-29T23:36:37.809] error: *** STEP 52222788.0 ON nid002888 CANCELLED AT 2026-04-29T23:36:37 "
                "DUE TO TASK FAILURE ***") == "process.child-failed"
    # a cancellation that gives no reason (a person's scancel) names no failed task
    assert mode("slurmstepd: error: *** JOB 830329 ON n447 CANCELLED AT 2018-08-06T17:21:44 ***") != "process.child-failed"


@pytest.mark.parametrize("line, expected", [
    ("slurmstepd: error: *** STEP 32233190.0 ON nid01934 CANCELLED AT 2020-07-03T02:59:56 DUE TO TIME LIMIT ***",
     "scheduler.time-limit"),
    ("slurmstepd: error: *** JOB 32391783 ON cn119 CANCELLED AT 2021-06-18T13:05:36 DUE TO PREEMPTION ***",
     "scheduler.preemption"),
    ("slurmstepd: error: *** JOB 1234 ON node7 CANCELLED AT 2024-01-02T03:04:05 DUE TO NODE FAILURE ***",
     "node.unresponsive"),
])
def test_a_slurm_cancellation_for_another_reason_is_that_reasons_mode(line: str, expected: str) -> None:
    assert mode(line) == expected
