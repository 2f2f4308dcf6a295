"""The swap's decision without a cluster (issue 23, item 3): the health check's drain reason read
back, sinfo's lines, which drained node makes a job leave (its hardware failed) and which does
not (an admin's drain, a full disk), and the start events that name a job's nodes. The swap itself
runs on a real SLURM in tests/slurm/test_swap.py and lab 6."""
from __future__ import annotations

from datetime import datetime

from hypothesis import given
from hypothesis import strategies as st

from tooling.catalogue.modes import catalogue
from tooling.health.faults import DRAIN_AUTOMATION
from tooling.health.reason import SEPARATOR, Failure, entry, failures
from tooling.slurm.job import Job
from tooling.slurm.nodes import NodeState, lost, parse_sinfo

MODES = [m.id for m in catalogue().modes]
# what the check writes as evidence: words, numbers, paths, "+" between two of one failure
EVIDENCE = st.text(st.sampled_from("abcXYZ019 /%+._-:"), min_size=1, max_size=40).map(str.strip).filter(
    lambda text: text and SEPARATOR.strip() not in text)
INCIDENT = st.none() | st.integers(1, 99_999).map(lambda n: f"INC-{n:04d}")


@given(st.lists(st.tuples(st.sampled_from(MODES), EVIDENCE, INCIDENT), min_size=1, max_size=4))
def test_a_drain_reason_reads_back_as_the_failures_it_was_written_from(
        written: list[tuple[str, str, str | None]]) -> None:
    reason = SEPARATOR.join(entry(*failure) for failure in written)
    assert failures(reason) == [Failure(*failure) for failure in written]


def test_what_names_no_failure_reads_as_none() -> None:
    assert failures("health-check kernel log: timeout") == []
    assert failures("reboot for the new kernel, ticket 4711") == []
    assert failures("gpu.fell-off-bus Xid 79 GPU 3, INC-0042; health-check room /ckpt: error") == [
        Failure("gpu.fell-off-bus", "Xid 79 GPU 3", "INC-0042")]


def test_sinfo_lines_are_read_with_the_time_of_the_reason() -> None:
    text = ("n1|mixed|Unknown|none\n"
            "n2|draining|2026-12-06T11:00:58|gpu.fell-off-bus Xid 79 GPU 0, INC-0001\n"
            "n3|down*|2026-12-06T11:02:00|Not responding\n")
    states = parse_sinfo(text)
    assert [(s.node, s.state, s.reason) for s in states] == [
        ("n1", "mixed", ""), ("n2", "draining", "gpu.fell-off-bus Xid 79 GPU 0, INC-0001"),
        ("n3", "down", "Not responding")]
    assert states[0].since is None
    assert states[1].since == datetime(2026, 12, 6, 11, 0, 58).astimezone()


def node(state: str, reason: str) -> NodeState:
    return NodeState("n2", state, None, reason)


def test_only_a_node_drained_for_its_hardware_makes_the_job_leave() -> None:
    hardware = [m.id for m in catalogue().modes if m.automation == DRAIN_AUTOMATION]
    assert {"gpu.fell-off-bus", "gpu.hbm-ecc"} <= set(hardware)
    for mode in hardware:
        [gone] = lost([node("draining", f"{mode} Xid 79 GPU 0, INC-0007")])
        assert (gone.node, gone.failure) == ("n2", Failure(mode, "Xid 79 GPU 0", "INC-0007"))
    # drained, but the job may finish there: an admin's maintenance, a full disk, a stale segment
    for reason in ("reboot after the jobs end", "storage.disk-full /ckpt 0% free, INC-0003",
                   "host.stale-shared-memory /dev/shm/x 8.0 KiB, INC-0004", "health-check kernel log: timeout"):
        assert lost([node("draining", reason)]) == [], reason
    # a node in service with an old reason left on it is not lost
    assert lost([node("mixed", "gpu.fell-off-bus Xid 79 GPU 0, INC-0007")]) == []
    # the hardware failure among others is found wherever it stands in the reason
    [gone] = lost([node("drained", "storage.disk-full /ckpt 0% free, INC-0003; gpu.hbm-ecc Xid 48 GPU 1, INC-0009")])
    assert gone.failure.incident == "INC-0009"


def test_a_job_of_several_nodes_names_them_at_its_start_and_after_a_requeue() -> None:
    first = Job.from_environment({"SLURM_JOB_ID": "7", "SLURMD_NODENAME": "n1", "SLURM_JOB_NODELIST": "n[1-3]",
                                  "SLURM_JOB_NUM_NODES": "3"})
    again = Job.from_environment({"SLURM_JOB_ID": "7", "SLURMD_NODENAME": "n1", "SLURM_JOB_NODELIST": "n[1,3-4]",
                                  "SLURM_JOB_NUM_NODES": "3", "SLURM_RESTART_COUNT": "1"})
    alone = Job.from_environment({"SLURM_JOB_ID": "8", "SLURMD_NODENAME": "n1", "SLURM_JOB_NODELIST": "n1",
                                  "SLURM_JOB_NUM_NODES": "1", "SLURM_RESTART_COUNT": "2"})
    assert first is not None and again is not None and alone is not None
    assert first.started() == [{"kind": "start", "job_id": "7", "host": "n1", "detail": "on n[1-3]"}]
    assert again.started() == [
        {"kind": "requeue", "job_id": "7", "host": "n1", "detail": "back from the queue: restart 1 on n[1,3-4]"},
        {"kind": "start", "job_id": "7", "host": "n1", "detail": "restart 1 on n[1,3-4]"}]
    # one node: the host says where, as before
    assert alone.started() == [
        {"kind": "requeue", "job_id": "8", "host": "n1", "detail": "back from the queue: restart 2"},
        {"kind": "start", "job_id": "8", "host": "n1", "detail": "restart 2"}]
