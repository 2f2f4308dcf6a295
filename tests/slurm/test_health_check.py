"""The node health check on a real SLURM of emulated nodes: scripts/slurm/health-check run as
slurmd runs a HealthCheckProgram (the node's name, no PATH) and, for one test, as the cluster's
Prolog before a job. Healthy: exit 0, nothing written; each fault: exit 1, the right failure mode,
the node drained with a reason naming the incident, one incident per node and failure, its
return an occurrence; a probe that hangs ends in its timeout with a located line."""
from __future__ import annotations

import mmap
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from emulated import Cluster, Hook, until

from support import snapshot, tmpfs
from tooling.records.load import load_file

REAL_SMI = shutil.which("nvidia-smi") is not None  # then the GPUs' own counters are read, not the stand-in


def incident(path: Path) -> dict:  # type: ignore[type-arg]
    return load_file(str(path)).data


def test_a_healthy_node_exits_0_writes_nothing_and_says_what_it_read(cluster: Cluster, hook: Hook) -> None:
    cluster.reset("n1")
    before = snapshot(hook.folder / "records")
    status, seconds = hook.run("n1")
    report = hook.log.read_text()
    assert status == 0, report
    assert snapshot(hook.folder / "records") == before and not (hook.folder / "state").exists()
    assert cluster.node("n1")["State"] == "IDLE"
    assert "n1: healthy (" in report
    assert f"kernel log       ok       {cluster.dir}/faults/n1/dmesg (stand-in for dmesg): " in report
    smi = "nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER"
    assert (f"gpu counters     ok       {smi}: " if REAL_SMI else
            f"gpu counters     ok       {cluster.dir}/faults/n1/nvidia-smi (stand-in for {smi}): 2 GPUs: ") in report
    assert seconds < 10


FAULTS = {  # injected, again, the failure mode, the evidence each time
    "xid-79": (("xid", "79"), ("xid", "79"), "gpu.fell-off-bus", ("Xid 79 GPU 0", "Xid 79 GPU 0")),
    "xid-48": (("xid", "48", "1"), ("xid", "48", "1"), "gpu.hbm-ecc", ("Xid 48 GPU 1", "Xid 48 GPU 1")),
    "xid-63": (("xid", "63"), ("xid", "63"), "gpu.hbm-ecc", ("Xid 63 GPU 0", "Xid 63 GPU 0")),
    "xid-64": (("xid", "64"), ("xid", "64"), "gpu.hbm-ecc", ("Xid 64 GPU 0", "Xid 64 GPU 0")),
    "uncorrectable-ecc": (("ecc", "2"), ("ecc", "5"), "gpu.hbm-ecc",
                          ("GPU 0 DRAM Uncorrectable 2", "GPU 0 DRAM Uncorrectable 5")),
}


@pytest.mark.parametrize("name", FAULTS)
def test_a_fault_drains_the_node_naming_its_incident_and_its_return_is_an_occurrence(
        cluster: Cluster, hook: Hook, name: str) -> None:
    first, again, mode, evidence = FAULTS[name]
    if first[0] == "ecc" and REAL_SMI:
        pytest.skip("nvidia-smi is installed: the GPUs' own counters are read, not the stand-in")
    cluster.reset("n2")
    cluster.inject("n2", *first)
    status, _ = hook.run("n2")
    assert status == 1, hook.log.read_text()
    [filed] = hook.incidents()
    record = incident(filed)
    assert (record["failure_mode"], record["nodes"], record["scope"], record["cluster"]) == \
        (mode, ["n2"], "cluster", "emulated")
    assert record["handled_by"] == "gpu-xid-drain"  # the check took the node out: no person did
    node = cluster.node("n2")
    assert "DRAIN" in node["State"] and node["Reason"] == f"{mode} {evidence[0]}, {filed.stem}"
    assert f"{filed.stem}" in cluster.sh("sinfo", "-R", "-h", "-o", "%n %E")
    # checked again: a kernel line is counted once (the node stays drained); a standing counter drains again
    assert hook.run("n2")[0] == (1 if first[0] == "ecc" else 0)
    assert hook.incidents() == [filed] and "occurrences" not in incident(filed)
    assert cluster.node("n2")["Reason"] == f"{mode} {evidence[0]}, {filed.stem}"
    cluster.inject("n2", *again)
    assert hook.run("n2")[0] == 1
    assert hook.incidents() == [filed] and incident(filed)["occurrences"] == 2
    assert cluster.node("n2")["Reason"] == f"{mode} {evidence[1]}, {filed.stem}"


def fill(folder: Path) -> None:
    """Write into ``folder`` until its file system has no byte left."""
    with pytest.raises(OSError), open(folder / "big", "wb") as out:
        while True:
            out.write(b"\0" * 65536)
            out.flush()


def exhaust(folder: Path) -> None:
    """Make empty files in ``folder`` until its file system has no inode left."""
    with pytest.raises(OSError):
        for number in range(100_000):
            (folder / f"f{number}").touch()


def test_a_full_and_an_inode_exhausted_file_system_each_drain_the_node(cluster: Cluster, hook: Hook) -> None:
    cluster.reset("n3")
    base = Path(tempfile.mkdtemp(prefix="hc", dir="/tmp"))  # short paths: the drain reason holds both whole
    with tmpfs(base / "ckpt", "1m") as checkpoints, tmpfs(base / "logs", "64m", inodes=32) as logs:
        fill(checkpoints)
        exhaust(logs)
        hook.configure(TOOLING_HEALTH_PATHS=f"{checkpoints} {logs}")
        status, _ = hook.run("n3")
    shutil.rmtree(base)
    assert status == 1, hook.log.read_text()
    full, starved = (incident(path) for path in hook.incidents())
    assert (full["failure_mode"], starved["failure_mode"]) == ("storage.disk-full", "storage.inode-exhaustion")
    assert "handled_by" not in full and "handled_by" not in starved  # drained, but the room is a person's to make
    first, second = (path.stem for path in hook.incidents())
    assert cluster.node("n3")["Reason"] == (f"storage.disk-full {checkpoints} 0% free, {first}; "
                                            f"storage.inode-exhaustion {logs} 0% inodes free, {second}")
    assert full["signatures"][0].startswith(f"{checkpoints}: 0 B free of 1.0 MiB (0% free)")


def test_the_hooks_retention_prunes_a_checkpoint_folder_no_job_writes(cluster: Cluster, hook: Hook,
                                                                     tmp_path: Path) -> None:
    # TOOLING_HEALTH_PRUNE_KEEP: the periodic check's retention pass (--prune-keep), as lab 7 runs it
    import torch

    from tooling.resilience.checkpoint import CheckpointManager
    folder = tmp_path / "old-run"
    with CheckpointManager(folder, keep=10) as manager:
        for step in range(5):
            manager.save({"w": torch.zeros(16)}, step)
    hook.configure(TOOLING_HEALTH_PATHS=str(folder), TOOLING_HEALTH_PRUNE_KEEP="2")
    assert hook.run("n1")[0] == 0, hook.log.read_text()
    assert sorted(p.name for p in folder.glob("ckpt-*.pt")) == ["ckpt-00000003.pt", "ckpt-00000004.pt"]
    assert f"pruned {folder}" in hook.log.read_text()


def test_a_stale_segment_in_dev_shm_drains_the_node_and_a_held_one_does_not(cluster: Cluster, hook: Hook) -> None:
    # In a folder of its own on /dev/shm's file system, which the check is pointed at: every other
    # emulated cluster's periodic check reads /dev/shm itself (files only, not folders), and would
    # drain its nodes for this stale segment, so that a parallel run had to keep lab 6, lab 7 and
    # the swap benchmark waiting behind these tests (tests/conftest.py's GROUPS).
    cluster.reset("n3")
    folder = Path(f"/dev/shm/tooling-test-{os.getpid()}")
    folder.mkdir()
    stale, held = folder / "stale", folder / "held"
    stale.write_bytes(b"\0" * 8192)  # a segment whose process was killed: nobody holds it
    # this process holds it as shm_open and SharedMemory do: the descriptor open, the file mapped
    handle = os.open(held, os.O_RDWR | os.O_CREAT, 0o600)
    os.ftruncate(handle, 4096)
    mapped = mmap.mmap(handle, 4096)
    try:
        for path in (stale, held):
            os.utime(path, (time.time() - 3600, time.time() - 3600))
        hook.configure(TOOLING_HEALTH_SHM=str(folder))
        status, _ = hook.run("n3")
    finally:
        mapped.close()
        os.close(handle)
        shutil.rmtree(folder)
    assert status == 1, hook.log.read_text()
    [filed] = hook.incidents()
    record = incident(filed)
    assert record["failure_mode"] == "host.stale-shared-memory"
    assert any(line.startswith(f"{stale}: 8.0 KiB, last written ") for line in record["signatures"])
    assert not any(held.name in line for line in record["signatures"])
    reason = cluster.node("n3")["Reason"]
    assert reason.startswith("host.stale-shared-memory ") and reason.endswith(f", {filed.stem}")


def test_a_probe_that_hangs_ends_in_its_timeout_with_a_located_line(cluster: Cluster, hook: Hook) -> None:
    cluster.reset("n4")
    stand_ins = hook.folder / "faults" / "n4"
    stand_ins.mkdir(parents=True)
    shutil.copy(cluster.dir / "faults" / "n4" / "nvidia-smi", stand_ins / "nvidia-smi")
    os.mkfifo(stand_ins / "dmesg")  # nobody writes it: a read blocks for ever, as on a dead NFS mount
    hook.configure(TOOLING_HEALTH_STAND_INS=str(hook.folder / "faults"), TOOLING_HEALTH_TIMEOUT="1")
    status, seconds = hook.run("n4")
    report = hook.log.read_text()
    assert status == 1 and seconds < 15, report
    assert (f"tooling: error: {stand_ins / 'dmesg'}:1:1: [probe-timeout] the kernel log probe got no answer within "
            "1 s (a FIFO, a hung mount or device?); expected its source to answer at once\n") in report
    assert cluster.node("n4")["Reason"] == "health-check kernel log: timeout"
    assert hook.incidents() == []  # no failure mode to file: a person looks


def test_the_prolog_drains_a_faulty_node_and_the_job_runs_on_the_spare(cluster: Cluster, tmp_path: Path) -> None:
    cluster.reset(*("n1", "n2", "n3", "n4"))
    cluster.inject("n2", "xid", "79", "1")
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\nsrun bash -c 'echo $SLURMD_NODENAME' | sort | tr '\\n' ' '\n")
    job = cluster.sh("sbatch", "--parsable", "--nodes=3", "--requeue", f"--output={tmp_path}/out-%j.txt", str(script))
    until(lambda: "DRAIN" in cluster.node("n2")["State"], "the Prolog to drain n2")
    reason = cluster.node("n2")["Reason"]
    assert reason.startswith("gpu.fell-off-bus Xid 79 GPU 1, INC-"), reason
    filed = incident(cluster.dir / "records" / "incidents" / f"{reason.rpartition(', ')[2]}.yaml")
    assert (filed["failure_mode"], filed["nodes"]) == ("gpu.fell-off-bus", ["n2"])
    # requeued (not held: nohold_on_prolog_fail), then placed on the spare once eligible again
    until(lambda: "COMPLETED" in cluster.sh("scontrol", "show", "job", job), f"job {job} to end", seconds=120)
    shown = cluster.sh("scontrol", "show", "job", job)
    assert "Restarts=1" in shown and " NodeList=n[1,3-4]" in shown
    assert (tmp_path / f"out-{job}.txt").read_text().split() == ["n1", "n3", "n4"]
