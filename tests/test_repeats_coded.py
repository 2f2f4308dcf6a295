"""Repeat grouping of one failure mode's incidents by the codes they carry (issue 25, heldout-repeats-13), with
made-up incidents: two incidents of one key whose CUDA errors, ncclResults or Xids name different failures
are two failures; the same code, the same error spelt another way, no code, or one code in common (an
incident with several) are judged by the key as before."""
from __future__ import annotations

from test_repeats import NOW, _groups, _incident
from tooling.analysis import analyse
from tooling.analysis.coded import apart, coded
from tooling.analysis.identity import identify
from tooling.analysis.incidents import incident_views
from tooling.analysis.repeats import likely_repeats_of

NVLINK = "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution"
CONTAINED = "CUDA_ERROR_CONTAINED: Invalid access of peer GPU memory over nvlink or a hardware error"
XID_74 = "NVRM: Xid (PCI:0000:ca:00): 74, pid=1846221, name=python, NVLink: fatal error detected on link 3"
XID_79 = "NVRM: Xid (PCI:0000:ca:00): 79, pid=1846221, name=python, GPU has fallen off the bus."
# a link that went down, as the NCCL call that met it returned it
SYSTEM = "NCCL WARN Call to ibv_modify_qp failed with error Connection timed out; ncclSystemError"


def _crash(n: int, **fields: object):  # type: ignore[no-untyped-def]
    return _incident(n, symptom="crash", layer="gpu-hardware", **fields)


def test_one_modes_incidents_with_different_cuda_errors_are_two_failures() -> None:
    records = [_crash(1, signatures=[NVLINK]), _crash(2, signatures=[CONTAINED]),
               _crash(3, signatures=[NVLINK.replace("RuntimeError: ", "")]),
               _crash(4, signatures=[CONTAINED.replace("peer", "the peer")])]
    keys = {identify(v).key for v in incident_views(records)}
    assert keys == {("mode", "gpu.nvlink-error")}  # one key: only the codes tell them apart
    assert sorted(_groups(records)) == [["INC-0001", "INC-0003"], ["INC-0002", "INC-0004"]]


def test_one_error_spelt_by_name_or_in_words_is_one_failure() -> None:
    records = [_crash(1, signatures=["RuntimeError: CUDA error: unknown error"]),
               _crash(2, signatures=["cudaErrorUnknown at step 5"]), _crash(3, signatures=["CUDA_ERROR_UNKNOWN"])]
    assert {identify(v).key for v in incident_views(records)} == {("mode", "gpu.faulty")}
    assert _groups(records) == [["INC-0001", "INC-0002", "INC-0003"]]


def test_different_nccl_results_are_two_failures_and_the_same_one_joins() -> None:
    records = [_incident(1, signatures=[SYSTEM]), _incident(2, signatures=[SYSTEM.replace("System", "Internal")]),
               _incident(3, signatures=[SYSTEM.replace("timed out", "refused")])]
    assert len({identify(v).key for v in incident_views(records)}) == 1
    assert sorted(_groups(records)) == [["INC-0001", "INC-0003"], ["INC-0002"]]


def test_an_incident_without_a_code_is_judged_by_its_key_as_before() -> None:
    records = [_crash(1, signatures=[NVLINK]), _crash(2, title="NVLink error on node 12 again, no line kept")]
    assert identify(incident_views(records)[1]).key == ("mode", "gpu.nvlink-error")
    assert _groups(records) == [["INC-0001", "INC-0002"]]


def test_xids_of_one_mode_are_one_failure_and_one_of_another_mode_is_not() -> None:
    row_remapper = ["NVRM: Xid (PCI:0000:ca:00): 64, pid=1846221, name=python, Row Remapper",
                    "NVRM: Xid (PCI:0000:3b:00): 63, pid=2207, name=python, Row Remapper: New row marked"]
    assert _groups([_crash(1, signatures=[row_remapper[0]]), _crash(2, signatures=[row_remapper[1]])]) == \
        [["INC-0001", "INC-0002"]]  # steps of one failing memory, both the ECC mode's
    # filed as NVLink failures: one whose lines show the bus drop only, one the link's own Xid
    records = [_crash(1, failure_mode="gpu.nvlink-error", signatures=[XID_79]),
               _crash(2, failure_mode="gpu.nvlink-error", signatures=[XID_74])]
    assert sorted(_groups(records)) == [["INC-0001"], ["INC-0002"]]


def test_a_consequence_after_the_modes_own_code_says_nothing_against_it() -> None:
    # an Xid 79 after the Xid 74 that took the GPU off the bus: the NVLink failure, as a lone Xid 74
    records = [_crash(1, signatures=[XID_74, XID_79]), _crash(2, signatures=[XID_74])]
    views = incident_views(records)
    assert coded(identify(views[0]), views[0].data) == {"xid": frozenset({"mode:gpu.nvlink-error"})}
    assert _groups(records) == [["INC-0001", "INC-0002"]]


def test_several_codes_with_one_in_common_are_one_failure() -> None:
    one = {"nccl": frozenset({"nccl:ncclUnhandledCudaError", "nccl:ncclInternalError"})}
    assert not apart(one, {"nccl": frozenset({"nccl:ncclInternalError"})})
    assert apart(one, {"nccl": frozenset({"nccl:ncclSystemError"})})
    assert not apart(one, {"cuda": frozenset({"cuda:unknown"})})  # another family says nothing
    assert not apart({"cuda": frozenset({"words:some new error"})}, {"cuda": frozenset({"cuda:unknown"})})


def test_a_description_quotes_a_code_no_line_carries() -> None:
    records = [_crash(1, title="NVLink fabric fault: CUDA_ERROR_CONTAINED on rank 3"), _crash(2, signatures=[NVLINK]),
               _crash(3, title="NVLink fault again, CUDA_ERROR_CONTAINED")]
    assert sorted(_groups(records)) == [["INC-0001", "INC-0003"], ["INC-0002"]]


def test_likely_repeats_leave_out_the_same_key_with_other_codes() -> None:
    records = [_crash(1, signatures=[NVLINK]), _crash(2, signatures=[CONTAINED]), _crash(3, signatures=[CONTAINED])]
    analysis = analyse(records, now=NOW)
    target = next(v for v in analysis.incidents if v.id == "INC-0003")
    found = [i for i, why in likely_repeats_of(target, analysis.incidents, analysis.index)
             if "same failure mode" in str(why.msgid)]
    assert found == ["INC-0002"]
