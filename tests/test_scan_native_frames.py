"""A block of native (C and C++) stack frames is a failure too (issue 25, item 1): several frames
in a row, in glibc's, gdb's or c10's shape, behind whatever prefix a launcher writes, that end
the log or are followed by a death, are drafted as ``other.unclassified`` with their lines and
the functions they name; a block under the message it is the stack of (an exception, glog's
signal line, a warning that goes on), one a named failure follows, and one the run goes on after
draft nothing of their own. Every log is made up."""
from __future__ import annotations

from pathlib import Path

import pytest

from scan_support import NOW, drafts
from tooling.logs import frames
from tooling.logs.scan import scan_logs
from tooling.logs.unknown import TAIL
from tooling.writers.filing import as_json

STEPS = [f"2026-11-02 03:00:{s:02d},000 INFO [train.py:214] step {s} | loss 2.51" for s in range(3)]
RAY = "(WorkerDict pid=830, ip=10.0.3.7) "
GLIBC = [RAY + "/opt/torch/lib/libtorch_cuda.so(+0xe5c7aa) [0x14d1948877aa] c10d::ProcessGroupNCCL::ncclCommWatchdog()",
         RAY + "/usr/lib/x86_64-linux-gnu/libstdc++.so.6(+0xdc253) [0x1501663dd253]",
         RAY + "/usr/lib/x86_64-linux-gnu/libc.so.6(+0x94ac3) [0x1501685e0ac3]",
         RAY + "/usr/lib/x86_64-linux-gnu/libc.so.6(+0x126850) [0x150168672850]"]
GDB = ["#0  0x00007f1c8a2b3e2c in __pthread_kill_implementation () from /lib/x86_64-linux-gnu/libc.so.6",
       "#1  0x00007f1c8a25ffb2 in raise (sig=6) at ../sysdeps/posix/raise.c:26",
       "#2  0x00007f1b2c0a1a2e in c10d::ProcessGroupNCCL::ncclCommWatchdog() () from /opt/torch/lib/libtorch_cuda.so"]
C10 = ["[rank3]:frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f3e8c1a1d87 in /t/libc10.so)",
       "[rank3]:frame #1: <unknown function> + 0x1c2a3f (0x7f3e8c26ba3f in /opt/torch/lib/libtorch_cuda.so)",
       "[rank3]:frame #2: <unknown function> + 0x94ac3 (0x7f3e8d0a9ac3 in /lib/x86_64-linux-gnu/libc.so.6)"]


def _found(found: list[dict]) -> list[tuple[str, int, int]]:  # type: ignore[type-arg]
    return [(d["failure_mode"], e["first_line"], e["last_line"]) for d in found for e in d["logs"]]


def test_glibc_frames_behind_rays_prefix_that_end_the_log_are_one_unclassified_failure(tmp_path: Path) -> None:
    # two workers' blocks, ten lines apart: one episode, one draft
    lines = [*STEPS, *GLIBC, *[RAY.strip()] * 9, *GLIBC[1:]]
    [draft] = drafts(tmp_path, "\n".join(lines) + "\n")
    assert _found([draft]) == [("other.unclassified", 4, 19)]
    assert draft["signatures"][0] == GLIBC[0]
    assert draft["evidence"] == ["4 native stack frames, innermost first: c10d::ProcessGroupNCCL::ncclCommWatchdog()",
                                 "3 native stack frames, none with a function's name"]


def test_gdb_frames_followed_by_a_death_killed_their_rank(tmp_path: Path) -> None:
    heartbeats = [f"node001: INFO heartbeat {n}" for n in range(TAIL + 5)]
    lines = [*STEPS, *GDB, "srun: error: node017: task 3: Exited with exit code 3", *heartbeats]
    [draft] = drafts(tmp_path, "\n".join(lines) + "\n")
    assert _found([draft]) == [("other.unclassified", 4, 7)]
    assert draft["evidence"] == ["3 native stack frames, innermost first: __pthread_kill_implementation, raise, "
                                 "c10d::ProcessGroupNCCL::ncclCommWatchdog()"]


@pytest.mark.parametrize("chunk", [400, 1 << 20])  # 400: the block waits for the next chunk
def test_c10_frames_of_a_rank_read_in_any_chunks_are_the_same_failure(tmp_path: Path, chunk: int) -> None:
    log = tmp_path / "train.log"
    log.write_text("\n".join([*STEPS, *C10]) + "\n", "utf-8")
    found = [as_json(d) for d in scan_logs([log], now=NOW, chunk=chunk).drafts]
    assert _found(found) == [("other.unclassified", 4, 6)]
    assert found[0]["ranks"] == [3]
    assert found[0]["evidence"] == ["3 native stack frames, innermost first: "
                                    "c10::Error::Error(c10::SourceLocation, std::string)"]


def test_the_frames_of_an_exception_are_its_stack_not_a_failure_of_their_own(tmp_path: Path) -> None:
    lines = [*STEPS, "Traceback (most recent call last):", '  File "train.py", line 9, in <module>',
             "RuntimeError: CUDA error: an illegal memory access was encountered",
             "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
             "might be incorrect.", "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.",
             "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", "",
             "Exception raised from c10_cuda_check_implementation at /c10/cuda/CUDAException.cpp:43 (most recent "
             "call first):", *[line.removeprefix("[rank3]:") for line in C10]]
    assert [mode for mode, _, _ in _found(drafts(tmp_path, "\n".join(lines) + "\n"))] == ["cuda.illegal-memory-access"]


def test_a_warning_with_frames_and_frames_the_run_goes_on_after_draft_nothing(tmp_path: Path) -> None:
    warning = ["[W CUDAGuardImpl.h:119] Warning: CUDA warning: driver shutting down (function destroyEvent)",
               "Exception raised from destroyEvent at /c10/cuda/impl/CUDAGuardImpl.h:119 (most recent call first):"]
    assert drafts(tmp_path, "\n".join([*STEPS, *warning, *C10]) + "\n") == []
    assert drafts(tmp_path, "\n".join([*STEPS, *GDB, *STEPS]) + "\n") == []


def test_two_frames_are_not_a_block_and_a_named_failure_below_is_the_failure(tmp_path: Path) -> None:
    assert drafts(tmp_path, "\n".join([*STEPS, *GDB[:2]]) + "\n") == []
    lines = [*STEPS, *GDB, "Segmentation fault (core dumped)"]
    assert _found(drafts(tmp_path, "\n".join(lines) + "\n")) == [("process.segfault", 7, 7)]


def test_a_deep_stack_is_judged_once_not_from_each_of_its_frames(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A deep recursion prints thousands of frames: each block is read once where it opens (a
    block read again from each of its 20,000 frames took 18 s), and the verdict is the same."""
    read: list[int] = []
    block = frames.block
    monkeypatch.setattr(frames, "block", lambda buffer, start, limit: read.append(start) or block(buffer, start, limit))
    deep = [f"#{n}  0x00007f1b2c{n:06x} in recurse (depth={n}) at model.cpp:{n}" for n in range(3000)]
    assert drafts(tmp_path, "\n".join([*STEPS, *deep, *STEPS]) + "\n") == []  # the run went on after it
    assert len(read) <= 3000 // frames.MAX_FRAMES + 1
    read.clear()
    warning = "[W Module.cpp:12] Warning: a deep stack follows"
    assert drafts(tmp_path, "\n".join([*STEPS, warning, *deep[:200], *STEPS]) + "\n") == []
    assert len(read) == 1


def test_the_functions_each_shape_names() -> None:
    assert frames.names(tuple(GLIBC)) == ["c10d::ProcessGroupNCCL::ncclCommWatchdog()"]
    assert frames.names(("/usr/bin/python3(PyObject_Call+0x5c) [0x55d0c1b2a6dc]",)) == ["PyObject_Call"]
    assert frames.names(tuple(GDB)) == ["__pthread_kill_implementation", "raise",
                                        "c10d::ProcessGroupNCCL::ncclCommWatchdog()"]
    assert frames.names(("    @     0x7f1b2c0a1a2e c10d::ProcessGroupNCCL::ncclCommWatchdog()",
                         "    @     0x7f1c8a25f520 (unknown)")) == ["c10d::ProcessGroupNCCL::ncclCommWatchdog()"]
    assert not frames.is_frame("loss went to 0x7f at step 3 (see [0x10])")


def test_the_tail_of_a_stack_overflow_past_frame_9999_is_a_block(tmp_path: Path) -> None:
    """A native stack overflow prints a frame for each call, up to some hundred thousand; a paste
    often keeps only its last frames, numbered past 9,999 (they were not read as frames)."""
    tail = [f"#{n}  0x00007f1b2c{n:06x} in recurse (depth={n}) at model.cpp:{n}" for n in range(174650, 174654)]
    assert all(frames.is_frame(line) for line in tail)
    assert frames.is_frame("[rank0]:frame #10240: <unknown function> + 0x94ac3 (0x7f3e8d0a9ac3 in /lib/libc.so.6)")
    [draft] = drafts(tmp_path, "\n".join([*STEPS, *tail]) + "\n")
    assert _found([draft]) == [("other.unclassified", 4, 7)]
    assert draft["evidence"] == ["4 native stack frames, innermost first: recurse"]
