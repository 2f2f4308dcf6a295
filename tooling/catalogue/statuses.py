"""A library's errors written by their numbers, read as the names the catalogue's recognisers know.

The CUDA runtime's by a number after its words (``THCudaCheck FAIL file=... error=2 : out of
memory``, ``cuda runtime error (59)``), NCCL's by the return trace at its edge (``NCCL INFO
group.cc:64 -> 3``), and any of CUDA's, NCCL's, cuDNN's or cuBLAS's by a glog CHECK of a call against
the library's success code, which writes both values: ``Check failed: error == cudaSuccess (2 vs.
0)  out of memory``, ``Check failed: CUDA_SUCCESS == dynload::cuCtxSetCurrent(...) (0 vs. 4)``. The
call failed with the other value: the line is recognised as that error's mode. (Its codes are still
the names its words carry, the success code among them: :mod:`tooling.catalogue.codes`.)
"""
from __future__ import annotations

import re

# CUDA runtime errors a line writes by number ("THCudaCheck FAIL file=... line=66 error=2 : out of
# memory", "cuda runtime error (59) : device-side assert triggered", "CUDA error code 700"; never a
# bare "CUDA error: 2", which may be a count), by the names the catalogue's recognisers read. Only
# numbers that name one error in both numberings: CUDA 10.1 renumbered most (an illegal address was
# 77 and is 700; 4 was a launch failure and is another error now)
CUDA_RUNTIME = {2: "cudaErrorMemoryAllocation", 35: "cudaErrorInsufficientDriver", 59: "cudaErrorAssert",
                77: "cudaErrorIllegalAddress", 100: "cudaErrorNoDevice", 209: "cudaErrorNoKernelImageForDevice",
                700: "cudaErrorIllegalAddress", 710: "cudaErrorAssert", 719: "cudaErrorLaunchFailure",
                999: "cudaErrorUnknown"}
CUDA_NUMBERED = r"thcudacheck fail|cuda (runtime )?error (\(|code)"  # also one of scan's automaton patterns
_CUDA_NUMBER = re.compile(r"\bTHCudaCheck FAIL\b.{0,400}?\berror=([0-9]{1,3})\b"
                          r"|\bcuda (?:runtime )?error (?:\(|code ?[:=]? ?)([0-9]{1,3})\b", re.IGNORECASE)
# ncclResult_t (nccl.h) as NCCL's INFO trace passes it up ("NCCL INFO group.cc:64 -> 3"): at
# group.cc it leaves NCCL, the error the caller got back, even where no WARN line said it
NCCL_RESULTS = {1: "ncclUnhandledCudaError", 2: "ncclSystemError", 3: "ncclInternalError",
                4: "ncclInvalidArgument", 5: "ncclInvalidUsage", 6: "ncclRemoteError"}
NCCL_RETURNED = r"NCCL INFO group\.cc:[0-9]+ -> ([1-6])\b"  # also one of scan's automaton patterns
_RETURNED = re.compile(NCCL_RETURNED)
# the driver API's CUresult (cuda.h), numbered the same in every release
CUDA_DRIVER = {1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY", 3: "CUDA_ERROR_NOT_INITIALIZED",
               4: "CUDA_ERROR_DEINITIALIZED", 100: "CUDA_ERROR_NO_DEVICE", 209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
               214: "CUDA_ERROR_ECC_UNCORRECTABLE", 700: "CUDA_ERROR_ILLEGAL_ADDRESS", 710: "CUDA_ERROR_ASSERT",
               719: "CUDA_ERROR_LAUNCH_FAILED", 999: "CUDA_ERROR_UNKNOWN"}
# cudnnStatus_t up to cuDNN 8 (cuDNN 9 numbers its errors from 1000: none of these collide)
CUDNN = {1: "NOT_INITIALIZED", 2: "ALLOC_FAILED", 3: "BAD_PARAM", 4: "INTERNAL_ERROR", 5: "INVALID_VALUE",
         6: "ARCH_MISMATCH", 7: "MAPPING_ERROR", 8: "EXECUTION_FAILED", 9: "NOT_SUPPORTED", 10: "LICENSE_ERROR"}
CUBLAS = {1: "NOT_INITIALIZED", 3: "ALLOC_FAILED", 7: "INVALID_VALUE", 8: "ARCH_MISMATCH", 11: "MAPPING_ERROR",
          13: "EXECUTION_FAILED", 14: "INTERNAL_ERROR", 15: "NOT_SUPPORTED", 16: "LICENSE_ERROR"}
# a library's success code -> its errors by number, as the catalogue names them
SUCCESS = {"cudaSuccess": CUDA_RUNTIME, "CUDA_SUCCESS": CUDA_DRIVER, "ncclSuccess": NCCL_RESULTS,
           "CUDNN_STATUS_SUCCESS": {n: f"CUDNN_STATUS_{name}" for n, name in CUDNN.items()},
           "CUBLAS_STATUS_SUCCESS": {n: f"CUBLAS_STATUS_{name}" for n, name in CUBLAS.items()}}
# glog's CHECK_EQ (and CHECK_OP's kin): "Check failed: <left> == <right> (<left's value> vs. <right's>)"
_CHECKED = re.compile(r"\bCheck failed: (\S.{0,300}?) == (\S.{0,300}?) \((-?[0-9]{1,5}) vs\. (-?[0-9]{1,5})\)")


def cuda_named(text: str) -> list[tuple[int, str]]:
    """(number, name) of each CUDA runtime error a line writes by a number CUDA_RUNTIME knows."""
    if "cuda" not in text.lower():
        return []
    numbers = (int(found.group(1) or found.group(2)) for found in _CUDA_NUMBER.finditer(text))
    return [(number, CUDA_RUNTIME[number]) for number in numbers if number in CUDA_RUNTIME]


def nccl_returned(message: str) -> str | None:
    """The NCCL error a return trace at NCCL's edge passes to its caller, or None."""
    found = _RETURNED.match(message)
    return NCCL_RESULTS[int(found.group(1))] if found else None


def checked(text: str) -> list[tuple[str, int, str]]:
    """(success code, the value the call got instead, the error's name) of each glog CHECK of a
    library call against its success code, where the library numbers its errors that way."""
    if "Check failed: " not in text:
        return []
    found = []
    for match in _CHECKED.finditer(text):
        left, right, left_value, right_value = match.groups()
        for success, value in ((right.strip(), int(left_value)), (left.strip(), int(right_value))):
            name = SUCCESS.get(success, {}).get(value)
            if name is not None:
                found.append((success, value, name))
    return found


# CUDA's own words for its runtime errors (cudaGetErrorString), as PyTorch writes them after "CUDA error: ":
# the name they stand for, so that an error in words and the same error by name compare as one
# (tooling.analysis.coded). Matched at the start of the words, lower-cased.
CUDA_MESSAGES = {"out of memory": "cudaErrorMemoryAllocation",
                 "an illegal memory access was encountered": "cudaErrorIllegalAddress",
                 "unspecified launch failure": "cudaErrorLaunchFailure",
                 "device-side assert triggered": "cudaErrorAssert", "unknown error": "cudaErrorUnknown",
                 "system not yet initialized": "cudaErrorSystemNotReady",
                 "uncorrectable ecc error encountered": "cudaErrorECCUncorrectable",
                 "uncorrectable nvlink error detected during the execution": "cudaErrorNvlinkUncorrectable",
                 "no cuda-capable device is detected": "cudaErrorNoDevice",
                 "cuda driver version is insufficient for cuda runtime version": "cudaErrorInsufficientDriver",
                 "misaligned address": "cudaErrorMisalignedAddress",
                 "an illegal instruction was encountered": "cudaErrorIllegalInstruction",
                 "the launch timed out and was terminated": "cudaErrorLaunchTimeout",
                 "too many resources requested for launch": "cudaErrorLaunchOutOfResources",
                 "invalid device function": "cudaErrorInvalidDeviceFunction",
                 "invalid device ordinal": "cudaErrorInvalidDevice",
                 "initialization error": "cudaErrorInitializationError",
                 "no kernel image is available": "cudaErrorNoKernelImageForDevice"}
_LIBRARY_PREFIX = re.compile(r"^(?:cudaError|CUDA_ERROR_)|_")


def cuda_error_name(code: str) -> str | None:
    """One spelling of a CUDA error read as a code, runtime's, driver API's or words alike:
    ``cudaErrorIllegalAddress``, ``CUDA_ERROR_ILLEGAL_ADDRESS`` and "an illegal memory access was
    encountered" are all ``illegaladdress``; a library's status keeps its library ("cublas:allocfailed").
    None for words CUDA_MESSAGES does not know: they can be compared only with other words."""
    name = cuda_named_in_words(code)
    if name is None:
        return None
    library, _, status = name.partition("_STATUS_")
    return f"{library.lower()}:{status.replace('_', '').lower()}" if status else _LIBRARY_PREFIX.sub("", name).lower()


def cuda_named_in_words(code: str) -> str | None:
    """A CUDA error's name as written (``CUDA_ERROR_CONTAINED``), or the name its words stand for
    (CUDA_MESSAGES), or None."""
    if not code[:1].islower() or code.startswith("cudaError"):  # a name, not words
        return code
    said = " ".join(code.lower().split())
    return next((name for words, name in CUDA_MESSAGES.items() if said.startswith(words)), None)
