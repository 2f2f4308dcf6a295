"""Lines of raw-log sweep 16 (tests/corpus/heldout-14) that were not read or were read by the line
below them: Ray's memory monitor killing workers before the kernel does (the raylet's "N Workers
(tasks / actors) killed due to memory pressure (OOM)", a worker's "Task was killed due to the node
running low on memory"), which is the host's memory running out; and a host-side C or C++ assert()
that failed (glibc's "Assertion `expr' failed."), which aborts the process, where a CUDA kernel's
assert, quoted with two backticks, stays a device-side assertion. Each with lines that must be its
mode and lines that must not (the public lines each recogniser is proven on are in
tests/corpus/loglines/)."""
from __future__ import annotations

from pathlib import Path

import pytest

from scan_support import drafts, mode

RAYLET = ("(raylet) [2024-08-25 19:21:02,241 E 1111013 1111013] (raylet) node_manager.cc:3064: 12 Workers "
          "(tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node "
          "(ID: b8aad7ac53c083fcae4851424e0362cec4a21916876b69bb1722ed29, IP: 172.31.105.218) over the last time "
          "period.")


@pytest.mark.parametrize("line, expected", [
    (RAYLET, "host.oom-killed"),
    ("Worker exit type: USER_ERROR Worker exit detail: Task was killed due to the node running low on memory.",
     "host.oom-killed"),
    ("python: /opt/conda/lib/python3.10/site-packages/deepspeed/ops/csrc/aio/common/deepspeed_aio_common.cpp:125: "
     "int _do_io_complete(long long int, long long int, std::unique_ptr<aio_context>&, "
     "std::vector<std::chrono::duration<double> >&): Assertion `n_completes >= min_completes' failed.",
     "process.abort"),
    ("darknet: ./src/utils.c:293: error: Assertion `0' failed.", "process.abort"),
])
def test_lines_that_say_their_mode(line: str, expected: str) -> None:
    assert mode(line) == expected


@pytest.mark.parametrize("line", [
    # a summary that counts no kill, and the causes Ray lists for a worker that died of anything
    "(raylet) node_manager.cc:3040: 0 Workers (tasks / actors) killed due to memory pressure (OOM), 3 Workers "
    "crashed due to other reasons at node (ID: 2c82620270df6b9dd7ae2791ef51ee4b5a9d5df9f795986c10dd219c)",
    "(raylet) Refer to the documentation on how to address the out of memory issue: "
    "https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html.",
    "Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. "
    "End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to "
    "high memory usage. (2) ray stop --force is called.",
])
def test_lines_that_are_not_ray_killing_for_memory(line: str) -> None:
    assert mode(line) != "host.oom-killed"


@pytest.mark.parametrize("line", [
    # a kernel's assert (its expression closed by a backtick), and an assertion that held
    "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1141: indexSelectLargeIndex: block: [15,0,0], thread: [96,0,0] "
    "Assertion `srcIndex < srcSelectDimSize` failed.",
    "AssertionError: expected 4 GPUs, found 2",
    "all assertions passed, 'failed' count 0",
])
def test_lines_that_are_not_a_host_assert(line: str) -> None:
    assert mode(line) != "process.abort"


def test_a_host_assert_is_the_abort_not_the_launcher_that_reported_it(tmp_path: Path) -> None:
    text = ("python: /opt/deepspeed/ops/csrc/aio/py_lib/deepspeed_py_aio_handle.cpp:223: int "
            "deepspeed_aio_handle_t::pread(const at::Tensor&, const char*, bool, bool): Assertion "
            "`static_cast<long long int>(buffer.nbytes()) == num_file_bytes' failed.\n"
            "[2023-12-31 02:55:09,375] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 302\n")
    assert [d["failure_mode"] for d in drafts(tmp_path, text)] == ["process.abort"]
