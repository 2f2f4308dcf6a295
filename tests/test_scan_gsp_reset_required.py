"""Lines of raw-log sweep 19 (tests/corpus/heldout-17) that were not read: the driver's calls run on
the GSP refused with status 0x62, NV_ERR_RESET_REQUIRED, and its assertion naming that status, with
no Xid (scitix/sichek#51, in the sweep): the GSP's view of a GPU that must be reset
(gpu.gsp-error). The same calls refused with 0xf, the GPU lost from the bus, stay
gpu.fell-off-bus's (Neroued/ninfer#12, a thread no set cites), and a normal driver line is nothing."""
from __future__ import annotations

from pathlib import Path

import pytest

from scan_support import drafts, mode

ALLOC = (" [Sun Jan 11 09:52:01 2026] NVRM: rpcRmApiAlloc_GSP: GspRmAlloc failed: hClient=0xc1d1a616;"
         " hParent=0x5c000054; hObject=0x5c00005b; hClass=0x0000c86f; paramsSize=0x00000170;"
         " paramsStatus=0x00000062; status=0x00000062")
ASSERT = (" [Sun Jan 11 09:52:01 2026] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required"
          " [NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:2874")


@pytest.mark.parametrize("line", [ALLOC, ASSERT])
def test_a_gsp_call_refused_for_a_reset_is_the_gsp(line: str) -> None:
    assert mode(line) == "gpu.gsp-error"


@pytest.mark.parametrize("line, expected", [
    ("Aug 10 22:40:59.880752 anthill kernel: NVRM: GPU0 rpcRmApiFree_GSP: GspRmFree failed:"
     " hClient=0xc1d00018; hObject=0x5c00002f; paramsStatus=0x00000000; status=0x0000000f",
     "gpu.fell-off-bus"),
    ("Apr 19 13:16:41 Kyrios kernel: NVRM: testIfDsmSubFunctionEnabled: GPS ACPI DSM called before"
     " _acpiDsmSupportedFuncCacheInit subfunction = 11.", None),
])
def test_other_statuses_and_normal_driver_lines_are_not(line: str, expected: str | None) -> None:
    assert mode(line) == expected


def test_the_two_lines_are_drafted_as_one_gsp_error(tmp_path: Path) -> None:
    found = [(d["failure_mode"], d["logs"][0]["first_line"]) for d in drafts(tmp_path, ALLOC + "\n" + ASSERT + "\n")]
    assert found == [("gpu.gsp-error", 1)]
