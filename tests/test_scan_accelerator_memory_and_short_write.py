"""Lines of raw-log sweep 21 (tests/corpus/heldout-19) drafted as bugs, and the families they
belong to: accelerator memory exhausted where the device is not CUDA's (a TPU's HBM as the XLA
runtime's buffer allocation reports it, pytorch/xla#8020 in the sweep and googlecolab/colabtools#5126
in tests/corpus/loglines; torch_npu's 'NPU out of memory', hiyouga/LlamaFactory#5491 in the sweep,
xingchensong/TouchNet#100 and vllm-project/vllm-ascend#19 in the loglines: cuda.oom), and numpy's
short write, the file system taking fewer bytes than asked ('N requested and 0 written', 'problem
writing element N to file': storage.io-error; lustre/lustre-release#16 in the sweep,
numpy/numpy#17589, xor2k/npy-append-array#11, MRSRL/dl-cs#1 in the loglines). An RPC's message
over gRPC's size limit is RESOURCE_EXHAUSTED too, but no memory ran out; numpy's refusal to write
for want of space is the full disk, not a failed write."""
from __future__ import annotations

from pathlib import Path

import pytest

from scan_support import drafts, mode

TPU = ("RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate"
       " 196.00M. That was not possible. There are 134.44M free.; (1x0x0_HBM0): while running replica 0 and partition 0"
       " of a replicated computation (other replicas may have failed as well).")
NPU = ("RuntimeError: NPU out of memory. Tried to allocate 386.00 MiB (NPU 2; 60.97 GiB total capacity; 59.57 GiB already"
       " allocated; 59.57 GiB current active; 16.54 MiB free; 60.06 GiB reserved in total by PyTorch) If reserved memory"
       " is >> allocated memory try setting max_split_size_mb to avoid fragmentation.")
SHORT_WRITE = "OSError: 120000000 requested and 0 written"


@pytest.mark.parametrize("line, expected", [
    (TPU, "cuda.oom"),
    (NPU, "cuda.oom"),
    (SHORT_WRITE, "storage.io-error"),
])
def test_the_sweeps_accelerator_memory_and_short_write_are_read(line: str, expected: str) -> None:
    assert mode(line) == expected


@pytest.mark.parametrize("line, unexpected", [
    # rpcpool/yellowstone-grpc#421 (its title): a message over gRPC's limit, no memory exhausted
    ("Error: 8 RESOURCE_EXHAUSTED: Received message larger than max (2065853043 vs 67108864)", "cuda.oom"),
    # PaddlePaddle/PaddleCustomDevice#690: an Ascend driver's memory statistics, not a failure
    ("[EVENT] DRV(3536113,python):2023-07-14-20:36:01.130.064 [ascend][curpid: 3536113, 3536113][drv][devmm]"
     "[_devmm_mem_stats_show 152]DEV_MEM dev2 mem stats(Bytes): module_name=APP, module_id=33"
     " current_alloced_size=29984933312, alloced_peak_size=29984937408.", "cuda.oom"),
    # mhardcastle/ddf-pipeline#124: numpy's refusal before writing, for want of space, is no failed write
    ("IOError: Not enough free space to write 163155480 bytes", "storage.io-error"),
])
def test_look_alikes_are_not_read_so(line: str, unexpected: str) -> None:
    assert mode(line) != unexpected


def test_the_sweeps_lines_are_drafted_under_their_modes(tmp_path: Path) -> None:
    assert [d["failure_mode"] for d in drafts(tmp_path, TPU + "\n")] == ["cuda.oom"]
    assert [d["failure_mode"] for d in drafts(tmp_path, NPU + "\n")] == ["cuda.oom"]
    assert [d["failure_mode"] for d in drafts(tmp_path, SHORT_WRITE + "\n")] == ["storage.io-error"]
