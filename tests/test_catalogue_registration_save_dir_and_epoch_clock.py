"""Lines of raw-log sweep 15 (tests/corpus/heldout-13) that were misread or not read: JAX's
coordination service failing the tasks' registration at start (its RegisterTask call, newer XLA's
'[Init]Wait_for_all_tasks_to_register' barrier and 'cluster registration failed'), which is the
ranks not meeting, not an unknown failure; torch.save's own error for a directory that is not there
('Parent directory ... does not exist.'), a checkpoint that could not be written, not a bug in the
code; and absl's E and F prefix with seconds since the epoch in its clock ('E0000
00:00:1743713172.513857'), an error line like glog's when it ends a log. Each with lines that must
be its mode and lines that must not."""
from __future__ import annotations

from pathlib import Path

import pytest

from scan_support import drafts, mode

ENZYME = ("E0000 00:00:1743713172.513857  698835 pjrt_stream_executor_client.cc:3072] Execution of replica 0 "
          "failed: DEADLINE_EXCEEDED: GetKeyValue() timed out with key: devices=[0,1,2,3]; stream=0 and duration: 10m")


@pytest.mark.parametrize("line, expected", [
    ("Original error: DEADLINE_EXCEEDED: Barrier timed out. Id: [Init]Wait_for_all_tasks_to_register::0. This "
     "usually happens because a task triggered the barrier too early or too slowly.", "network.rendezvous-failure"),
    ("Stopping coordination service as cluster registration failed. This may be due to 1) some tasks crashed "
     "earlier before connecting", "network.rendezvous-failure"),
    ("Additional GRPC error information from remote target unknown_target_for_coordination_leader while calling "
     "/tensorflow.CoordinationService/RegisterTask:", "network.rendezvous-failure"),
    ("RuntimeError: Parent directory ./earlysave does not exist.", "checkpoint.save-failed"),
    ("RuntimeError: Parent directory K:\\ZiToZi\\experiment_dir\\checkpoint does not exist.", "checkpoint.save-failed"),
])
def test_lines_that_say_their_mode(line: str, expected: str) -> None:
    assert mode(line) == expected


@pytest.mark.parametrize("line", [
    # a later call of the coordination service, or a later barrier: the ranks had met
    "Additional GRPC error information from remote target unknown_target_for_coordination_leader while calling "
    "/tensorflow.CoordinationService/Heartbeat:",
    "DEADLINE_EXCEEDED: Barrier timed out. Id: jax_checkpoint_save_barrier::12.",
    "/job:jax_worker/replica:0/task:3 has connected to coordination service.",
    "cluster registration succeeded after 41 s",
])
def test_lines_that_are_not_a_failed_registration(line: str) -> None:
    assert mode(line) != "network.rendezvous-failure"


@pytest.mark.parametrize("line", [
    "Directory checkpoints/ does not exist, creating it",  # a writer that makes it
    "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.json'",  # reading data, not saving
    "The parent directory is writable; saving checkpoint to ckpts/step_100.pt",
])
def test_lines_that_are_not_a_missing_save_directory(line: str) -> None:
    assert mode(line) != "checkpoint.save-failed"


def test_absl_epoch_clock_at_error_severity_ends_a_log_as_an_error(tmp_path: Path) -> None:
    assert [d["failure_mode"] for d in drafts(tmp_path, ENZYME + "\n")] == ["other.unclassified"]
    # the same prefix at INFO severity, and an error line the run went on after, are no failure
    info = ENZYME.replace("E0000", "I0000", 1) + "\n"
    assert drafts(tmp_path, info) == []
    went_on = ENZYME + "\nstep 12 | loss 2.31 | grad_norm 0.9\n"
    assert drafts(tmp_path, went_on) == []
