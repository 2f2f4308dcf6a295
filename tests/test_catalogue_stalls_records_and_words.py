"""Lines of raw-log sweep 14 (tests/corpus/heldout-12) that no recogniser read: a loss said in
words to have become NaN or infinite, whatever the verb (detectron2's 'Loss became infinite or
NaN'); a stall reporter's ranks or workers waiting on the others for more than so long (Horovod's
stall inspector); a launcher's JSON event record whose state is FAILED (torchelastic's
worker.status events) or torchelastic's older report of a failed child, its exit code written
without a colon; TSL's fatal stack dump ('*** Begin stack trace ***', as glog's '*** Check
failure stack trace' already was). Each with lines that must be its mode and lines that must not."""
from __future__ import annotations

from pathlib import Path

import pytest

from scan_support import drafts, mode

ELASTIC = ('{"name": "torchelastic.worker.status.%s", "source": "WORKER", "timestamp": 0, "metadata": {"run_id": '
           '"none", "global_rank": 2, "group_rank": 0, "worker_id": "392", "role": "default", "state": "%s", '
           '"total_run_time": 1071, "rdzv_backend": "static", "raw_error": "{\\"message\\": \\"<NONE>\\"}"}}')


@pytest.mark.parametrize("line, expected", [
    ("FloatingPointError: Loss became infinite or NaN at iteration=2137!", "training.nan"),
    ("WARNING: the loss went to infinity at step 4000, stopping", "training.nan"),  # paraphrase
    ("Epoch 3: loss has become nan", "training.nan"),  # paraphrase
    ("[1,0]<stderr>:er of ranks for more than 60 seconds. This may indicate that different ranks are trying to "
     "submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.",
     "training.hang"),
    ("W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced by subset of ranks "
     "and are waiting for remainder of ranks for more than 120 seconds.", "training.hang"),
    ("4 workers have been waiting on the all-reduce for more than 10 minutes", "training.hang"),  # paraphrase
    (ELASTIC % ("FAILED", "FAILED"), "process.child-failed"),
    ("Child process 6597 (local_rank 0) FAILED (exitcode 1)", "process.child-failed"),  # the exit code without a colon
    ("*** Begin stack trace ***", "other.unclassified"),
])
def test_lines_that_say_their_mode(line: str, expected: str) -> None:
    assert mode(line) == expected


@pytest.mark.parametrize("line", [
    "[2024-07-17 19:44:06,945] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping "
    "step. Attempted loss scale: 65536, reducing to 32768",  # the loss scale, not the loss
    "iter 1631: loss 4.0863, time 561.94ms",  # a loss that is a number
    "the loss became infinitesimally small after warm-up",  # not infinite
    "Waiting for 2 more workers, timeout in 600 seconds",  # a wait, no stall reported
    "Rank 3 waited 45 seconds at the barrier",  # no 'for more than'
    ELASTIC % ("SUCCEEDED", "SUCCEEDED"),  # a record that succeeded
    '{"state": "RUNNING", "failed_workers": 0}',
    "download failed (attempt 2 of 5), retrying",  # failed, no exit code
    "*** Begin training ***",
])
def test_lines_that_must_not_be_those_modes(line: str) -> None:
    assert mode(line) not in {"training.nan", "training.hang", "process.child-failed", "other.unclassified"}


def test_a_stall_report_drafts_and_a_stack_dump_drafts_only_where_the_run_did_not_go_on(
        tmp_path: Path) -> None:
    stall = ("[1,0]<stderr>:[2019-10-09 05:33:38.249493: W horovod/common/stall_inspector.cc:105] One or more "
             "tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting "
             "for remainder of ranks for more than 60 seconds.\n")
    assert [d["failure_mode"] for d in drafts(tmp_path, stall)] == ["training.hang"]
    dump = ("F0000 00:00:1717141650.890307    9276 pjrt_computation_client.cc:487] Non-OK-status: INTERNAL: Core "
            "halted unexpectedly\n*** Begin stack trace ***\n        tsl::CurrentStackTrace()\n")
    assert [d["failure_mode"] for d in drafts(tmp_path, dump)] == ["other.unclassified"]
    went_on = dump + "step 12 | loss 2.31 | grad_norm 0.9\n"  # a dump the run went on after: another thread's
    assert [d["failure_mode"] for d in drafts(tmp_path, went_on)] == []
