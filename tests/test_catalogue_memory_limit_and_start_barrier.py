"""Wording families raw-log sweep 9 (tests/corpus/heldout-7) showed the catalogue did not know: a
scheduler killing a job over its memory limit, a start barrier that timed out waiting for ranks
that never came, and Python logging's format with the level first. Lines each must and must not
match (the public lines each recogniser is proven on are in tests/corpus/loglines/)."""
from __future__ import annotations

import pytest

from scan_support import mode


@pytest.mark.parametrize("line", [
    "slurmstepd: error: Job 7518 exceeded memory limit (626359956 > 512000000), being killed",
    "slurmstepd-falkor7: error: Step 1141810.0 exceeded memory limit (52917772 > 20971520), being killed",
    "slurmstepd: error: Exceeded job memory limit",
    "srun: Exceeded job memory limit",
    "slurmstepd: error: Exceeded step memory limit  ",
])
def test_a_schedulers_kill_over_the_memory_limit_is_a_host_oom(line: str) -> None:
    assert mode(line) == "host.oom-killed"


@pytest.mark.parametrize("line", [
    "slurmstepd: Exceeded step memory limit at some point.",  # SLURM's warning for jobs that finish well
    "memory limit: 512000000",
    "#SBATCH --mem=64Gb  # job memory limit",
])
def test_a_memory_limit_named_or_warned_about_is_no_kill(line: str) -> None:
    assert mode(line) != "host.oom-killed"


@pytest.mark.parametrize("line", [
    "RuntimeError: Timed out initializing process group in store based barrier on rank: 2, for key: "
    "store_based_barrier_key:1 (world_size=2, worker_count=4, timeout=0:30:00)",
    "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: PjRT_Client_Connect. "
    "Timed out task names:",
    "jaxlib._jax.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Id: PjRT_Client_Connect",
])
def test_a_start_barrier_that_timed_out_is_a_rendezvous_failure(line: str) -> None:
    assert mode(line) == "network.rendezvous-failure"


@pytest.mark.parametrize("line", [
    # waiting at the barrier, not yet timed out
    "Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 "
    "(world_size=4, worker_count=8, timeout=0:30:00)",
    # a barrier of a run under way (levanter's broadcast of its tracker's metadata), not the start's
    "jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: "
    "multihost_broadcast_sync0. Timed out task names:",
])
def test_other_barriers_are_not_the_start(line: str) -> None:
    assert mode(line) != "network.rendezvous-failure"


def test_loggings_level_first_format_at_error_is_an_unclassified_line() -> None:
    assert mode("ERROR - container_support.training - uncaught exception during training: : Unable to "
                "connect to endpoint") == "other.unclassified"
    assert mode("CRITICAL - root - training aborted") == "other.unclassified"
    assert mode("INFO - container_support.training - Invoking user training script.") is None
    assert mode("WARNING - root - no hostfile found") is None
    assert mode("Error - the value is too high - try again") is None  # prose, no logger's name
