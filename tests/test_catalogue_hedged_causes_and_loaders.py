"""Lines of raw-log sweep 10 (tests/corpus/heldout-8) and their families, recognised one at a time:
a line that lists the causes it might have asserts none of them (Ray's worker-died message names
SIGSEGV among its guesses); Ray's driver on a worker that died is a failed child, as torchrun's is;
a package that cannot load its compiled library is a missing dependency, while NCCL's INFO on an
optional plugin, a UserWarning and Hadoop's warning, which go on without theirs, are not; LSF's and
PBS's kills over a memory or run-time limit read as SLURM's do (sweep 9)."""
from __future__ import annotations

import pytest

from scan_support import mode
from tooling.catalogue.recognise import asserted

RAY = ("(raylet) A worker died or was killed while executing a task by an unexpected system error. To "
       "troubleshoot the problem, check the logs for the dead worker. Worker exit type: SYSTEM_ERROR Worker exit "
       "detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential "
       "root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop "
       "--force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.")


def test_a_list_of_possible_causes_asserts_none_of_them() -> None:
    assert mode(RAY) == "process.child-failed"
    assert "SIGSEGV" not in asserted(RAY) and asserted(RAY).endswith("End of file. There are some ")
    assert mode("Training failed. Possible reasons are: out of memory, a segmentation fault, NCCL timeout") is None


def test_what_a_line_says_before_its_guesses_still_decides() -> None:
    assert mode("RuntimeError: CUDA error: out of memory. Possible causes: fragmentation, a leak") == "cuda.oom"
    assert mode("Segmentation fault (core dumped). Likely causes: a bad extension, a driver bug") == "process.segfault"
    # one cause named, not a list of guesses: the line is read whole
    assert mode("Possible cause: Segmentation fault in rank 3") == "process.segfault"


@pytest.mark.parametrize("line", [
    "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
    "Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2.",
])
def test_rays_driver_on_a_worker_that_died_is_a_failed_child(line: str) -> None:
    assert mode(line) == "process.child-failed"


def test_a_ray_worker_that_exited_as_asked_is_no_failure() -> None:
    assert mode("Worker exit type: INTENDED_USER_EXIT Worker exit detail: Worker exits by an user request.") is None


@pytest.mark.parametrize("line", [
    "OSError: /data1/prd/bitsandbytes/bitsandbytes/libbitsandbytes_cpu.so: cannot open shared object file: "
    "No such file or directory",
    "Could not load bitsandbytes native library: /notebooks/bitsandbytes/bitsandbytes/libbitsandbytes_cpu.so: "
    "cannot open shared object file: No such file or directory",
    "RuntimeError: Failed to load the onnxruntime native library",
])
def test_a_package_that_cannot_load_its_compiled_library_is_a_dependency(line: str) -> None:
    assert mode(line) == "software.dependency"


@pytest.mark.parametrize("line", [
    "host-2:38610:38610 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: "
    "cannot open shared object file: No such file or directory",
    "/usr/lib/python3.10/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python "
    "extension: libc10_cuda.so: cannot open shared object file: No such file or directory",
    "WARN util.NativeCodeLoader: Unable to load native-hadoop library for your platform... using builtin-java "
    "classes where applicable",
])
def test_a_library_gone_without_is_no_dependency_failure(line: str) -> None:
    assert mode(line) != "software.dependency"


@pytest.mark.parametrize("line, expected", [
    ("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.", "host.oom-killed"),
    ("=>> PBS: job killed: mem 17180000kb exceeded limit 16777216kb", "host.oom-killed"),
    ("=>> PBS: job killed: vmem 9000000kb exceeded limit 8388608kb", "host.oom-killed"),
    ("TERM_RUNLIMIT: job killed after reaching LSF run time limit.", "scheduler.time-limit"),
    ("=>> PBS: job killed: walltime 86415 exceeded limit 86400", "scheduler.time-limit"),
])
def test_lsfs_and_pbss_kills_over_a_limit_are_read_as_slurms(line: str, expected: str) -> None:
    assert mode(line) == expected


@pytest.mark.parametrize("line", [
    "TERM_OWNER: job killed by owner.",  # a person's kill, not a limit
    " MEMLIMIT",  # bjobs -l's heading of the limit set, not a kill
    "    Max Memory :                                 49 MB",
])
def test_lsfs_other_lines_are_no_memory_kill(line: str) -> None:
    assert mode(line) != "host.oom-killed"
