"""What a launcher or a coordinator says when it loses a peer, and how an accelerator's runtime says
it ran out of memory (raw-log sweeps 7 and 8, issue 25): Open MPI's launcher that lost a node's
daemon and XLA's coordination service that missed a task's heartbeat (the peer stopped answering:
node.unresponsive); mpirun's report that a process exited non-zero, its help text wrapped at 72
columns, and a peer's death seen from the other end of a connection (other.unclassified, drafted
where the run did not go on); XLA's RESOURCE_EXHAUSTED for device memory (cuda.oom). Lines that
must be recognised and lines that must not, and made-up logs around them."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from tooling.catalogue.recognise import recognise
from tooling.logs.scan import scan_logs

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
STEP = "[1,0]<stdout>:step 1200 | loss 2.31 | lr 1e-4"
PEER = ["An MPI communication peer process has unexpectedly disconnected.  This",
        "usually indicates a failure in the peer process (e.g., a crash or",
        "otherwise exiting without calling MPI_FINALIZE first).",
        "",
        "  Local host: node-3",
        "  Peer host:  node-7",
        "--------------------------------------------------------------------------"]
MPIRUN = ["-------------------------------------------------------",
          "Primary job  terminated normally, but 1 process returned",
          "a non-zero exit code. Per user-direction, the job has been aborted.",
          "-------------------------------------------------------"]


def mode(text: str) -> str | None:
    found = recognise(text)
    return found.mode.id if found.mode else None


def drafted(tmp_path: Path, *lines: str) -> list[tuple[str, int]]:
    log = tmp_path / "job.log"
    log.write_text("".join(f"{text}\n" for text in lines), encoding="utf-8")
    return [(d.mode.id, min(where.first for where in d.logs.values())) for d in scan_logs([log], now=NOW).drafts]


def test_a_peer_that_stopped_answering_is_a_node_unresponsive() -> None:
    assert mode("ORTE has lost communication with a remote daemon.") == "node.unresponsive"
    assert mode(" ORTE has lost communication with its daemon located on node:") == "node.unresponsive"
    heartbeat = ("2024-10-09 15:47:38.568412: E external/xla/xla/tsl/distributed_runtime/coordination/"
                 "coordination_service.cc:1170] /job:jax_worker/replica:0/task:3 has been set to ERROR in "
                 "coordination service: UNAVAILABLE: Task /job:jax_worker/replica:0/task:3 heartbeat timeout. This "
                 "indicates that the remote task has failed, got preempted, or crashed unexpectedly.")
    assert mode(heartbeat) == "node.unresponsive"  # a preemption among the guesses is not one
    assert mode("master - The worker 12(host=10.0.0.7) timed out after 304310ms without a heartbeat!") == \
        "node.unresponsive"


def test_a_heartbeat_setting_or_a_connection_that_came_back_is_not() -> None:
    assert mode("Setting heartbeat timeout to 100 s for the coordination service") is None
    assert mode("jax.distributed.initialize(heartbeat_timeout_seconds=100)") is None
    assert mode("ORTE has established communication with all daemons") is None
    assert mode("worker 3 reconnected after it disconnected") is None


def test_a_launchers_non_zero_exit_and_a_peers_death_are_unclassified_deaths() -> None:
    assert mode("a non-zero exit code. Per user-direction, the job has been aborted.") == "other.unclassified"
    assert mode("mpirun detected that one or more processes exited with non-zero status, thus causing") == \
        "other.unclassified"
    assert mode("An MPI communication peer process has unexpectedly disconnected.  This") == "other.unclassified"
    assert mode("all 8 processes exited with a zero exit status") is None
    assert mode("the client disconnected cleanly") is None


def test_they_draft_where_the_run_did_not_go_on(tmp_path: Path) -> None:
    assert drafted(tmp_path, STEP, *PEER) == [("other.unclassified", 2)]
    assert drafted(tmp_path, STEP, *MPIRUN) == [("other.unclassified", 4)]
    assert drafted(tmp_path, STEP, "ORTE has lost communication with a remote daemon.") == \
        [("node.unresponsive", 2)]
    assert drafted(tmp_path, STEP, *PEER[:3], STEP) == []  # a peer that disconnected, and the run went on


def test_xla_says_device_memory_ran_out_as_resource_exhausted() -> None:
    assert mode("OP_REQUIRES failed at tpu_execute_op.cc:266 : RESOURCE_EXHAUSTED: Attempting to reserve 6.48G at "
                "the bottom of memory. That was not possible.") == "cuda.oom"
    assert mode("(1) Resource exhausted: Attempting to allocate 180.59M. That was not possible.") == "cuda.oom"
    assert mode("XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory "
                "space hbm. Used 21.90G of 7.48G hbm.") == "cuda.oom"
    assert mode("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 3743729664 bytes.") == "cuda.oom"


def test_resource_exhausted_of_something_else_is_not_memory() -> None:
    assert mode("grpc: RESOURCE_EXHAUSTED: Quota exceeded for quota metric 'Read requests'") != "cuda.oom"
    assert mode("RESOURCE_EXHAUSTED: received message larger than max (5000000 vs. 4194304)") != "cuda.oom"
