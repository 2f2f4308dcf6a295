"""`tooling health-check` without SLURM: the probes' logic on files (nvidia-smi reports, kernel
lines, file systems, shared memory) and the command on an emulated node's stand-ins, filing into
a repository. The drain, the Prolog and the HealthCheckProgram on a real SLURM are in tests/slurm/."""
from __future__ import annotations

import json
import mmap
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from support import PROJECT, snapshot, tooling
from tooling.health import gpus, host, kernel
from tooling.records.load import load_file

CLUSTER = PROJECT / "scripts" / "slurm-cluster"
NOW = "2026-11-29T12:00:00+00:00"
REAL_SMI = shutil.which("nvidia-smi") is not None  # where nvidia-smi exists the real one is read, not the stand-in

H100 = """
==============NVSMI LOG==============

Attached GPUs                             : 2
GPU 00000000:18:00.0
    ECC Mode
        Current                           : Enabled
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : {sram}
            SRAM Uncorrectable SEC-DED    : 0
            DRAM Correctable              : 7
            DRAM Uncorrectable            : {dram}
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 0
            DRAM Correctable              : 7
            DRAM Uncorrectable            : 3
    Retired Pages
        Single Bit ECC                    : N/A
        Double Bit ECC                    : N/A
        Pending Page Blacklist            : N/A
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 2
        Pending                           : {pending}
        Remapping Failure Occurred        : {failure}
        Bank Remap Availability Histogram
            Max                           : 639 bank(s)
            High                          : 1 bank(s)

GPU 00000000:3B:00.0
    ECC Errors
        Volatile
            DRAM Uncorrectable            : 0
"""
# before Ampere: counts by memory under "Double Bit", retired pages instead of remapped rows
V100 = """
GPU 00000000:86:00.0
    ECC Errors
        Volatile
            Single Bit
                Device Memory             : 12
                Total                     : 12
            Double Bit
                Device Memory             : {dbe}
                Total                     : {dbe}
        Aggregate
            Double Bit
                Total                     : 9
    Retired Pages
        Single Bit ECC                    : 2
        Double Bit ECC                    : 1
        Pending Page Blacklist            : {pending}
"""


def test_a_healthy_report_has_no_fault_and_counts_its_gpus_in_order() -> None:
    # the Aggregate counts and the uncorrectable rows remapped long ago are a healed GPU's past
    found, faults = gpus.read_counters(H100.format(sram=0, dram=0, pending="No", failure="No"), "nvidia-smi")
    assert faults == []
    assert [(g.index, g.bus) for g in found] == [(0, "00000000:18:00.0"), (1, "00000000:3B:00.0")]
    assert gpus.read_counters(V100.format(dbe=0, pending="No"), "nvidia-smi")[1] == []


@pytest.mark.parametrize("values, expected", [
    (dict(sram=0, dram=2, pending="No", failure="No"),
     [("gpu.hbm-ecc", "GPU 0 DRAM Uncorrectable 2",
       "GPU 00000000:18:00.0: ECC Errors > Volatile > DRAM Uncorrectable: 2")]),
    (dict(sram=1, dram=0, pending="No", failure="No"),
     [("gpu.sram-ecc", "GPU 0 SRAM Uncorrectable Parity 1",
       "GPU 00000000:18:00.0: ECC Errors > Volatile > SRAM Uncorrectable Parity: 1")]),
    (dict(sram=0, dram=0, pending="Yes", failure="Yes"),
     [("gpu.hbm-ecc", "GPU 0 Remapped Rows Pending", "GPU 00000000:18:00.0: Remapped Rows > Pending: Yes"),
      ("gpu.hbm-ecc", "GPU 0 Remapping Failure Occurred",
       "GPU 00000000:18:00.0: Remapped Rows > Remapping Failure Occurred: Yes")]),
])
def test_each_counter_that_distrusts_the_memory_is_a_fault_of_its_mode(values: dict, expected: list) -> None:
    faults = gpus.read_counters(H100.format(**values), "nvidia-smi")[1]
    assert [(f.mode.id, f.evidence, f.lines[0]) for f in faults] == expected
    assert all(f.standing for f in faults)  # counted again only when the counter changes


def test_before_ampere_a_double_bit_error_or_a_pending_retirement_is_a_fault() -> None:
    faults = gpus.read_counters(V100.format(dbe=4, pending="Yes"), "nvidia-smi")[1]
    assert [(f.mode.id, f.evidence) for f in faults] == [
        ("gpu.hbm-ecc", "GPU 0 Total 4"), ("gpu.hbm-ecc", "GPU 0 Pending Page Blacklist")]


def test_nvidia_smi_that_cannot_reach_a_gpu_is_read_through_the_catalogue() -> None:
    lost = "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n"
    assert [(f.mode.id, f.lines) for f in gpus.failed_command(lost, "nvidia-smi")] == \
        [("gpu.fell-off-bus", (lost.strip(),))]
    assert gpus.failed_command("Failed to initialize NVML: Insufficient Permissions\n", "nvidia-smi") == []


lines_strategy = st.lists(st.sampled_from(["[1.0] a", "[2.0] b", "[3.0] c", "same line"]), max_size=12)


@pytest.mark.slow  # ~2 s: many examples
@given(lines_strategy, lines_strategy)
def test_the_lines_after_an_offset_are_exactly_those_written_since(before: list[str], since: list[str]) -> None:
    # whatever repeats: the offset is the last line read and which of its equals it was
    assert kernel.after(before + since, kernel.end_of(before)) == (before + since if not before else since)


@pytest.mark.slow  # ~1 s: many examples
@given(st.integers(0, 30), st.integers(1, 30), st.integers(0, 30))
def test_a_ring_buffer_that_dropped_the_line_read_gives_every_line(read: int, dropped: int, since: int) -> None:
    lines = [f"[{n}.000000] line {n}" for n in range(read + since)]  # dmesg's lines carry their time
    offset = kernel.end_of(lines[:read])
    kept = lines[dropped:]
    assert kernel.after(kept, offset) == (lines[read:] if offset is not None and dropped < read else kept)


def test_the_kernels_lines_are_read_through_the_catalogue_and_only_the_nodes_faults_drain() -> None:
    from datetime import datetime, timezone

    lines = ["[  812.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python, GPU has fallen off the bus.",
             "[  813.0] NVRM: Xid (PCI:0000:18:00): 64, pid=4242, name=python, Dynamic Page Retirement: Failed",
             "[  900.0] Out of memory: Killed process 4242 (python) total-vm:1kB",
             "[  901.0] usb 1-1: new high-speed USB device number 2"]
    found = gpus.read_counters(H100.format(sram=0, dram=0, pending="No", failure="No"), "nvidia-smi")[0]
    drafts = kernel.drafts(lines, name="dmesg", now=datetime(2026, 11, 29, tzinfo=timezone.utc))
    faults, others = kernel.faults(drafts, source="dmesg", gpus=found)
    assert [(f.mode.id, f.evidence, f.standing) for f in faults] == [
        ("gpu.fell-off-bus", "Xid 79 GPU 1", None), ("gpu.hbm-ecc", "Xid 64 GPU 0", None)]
    assert [d.mode.id for d in others] == ["host.oom-killed"]  # the job's, not the node's


def test_a_file_system_short_of_space_or_inodes_is_a_fault() -> None:
    room = host.read_room("/ckpt", "4096 1000 9 500 400 9")
    assert room is not None and room.summary() == "/ckpt: 36.0 KiB free of 3.9 MiB (0% free); 400 of 500 inodes free"
    assert [(f.mode.id, f.evidence) for f in host.room_faults(room, min_free=5, source="stat -f /ckpt")] == \
        [("storage.disk-full", "/ckpt 0% free")]
    starved = host.read_room("/logs", "4096 1000 900 500 4 900")
    assert starved is not None
    assert [(f.mode.id, f.evidence) for f in host.room_faults(starved, min_free=5, source="x")] == \
        [("storage.inode-exhaustion", "/logs 0% inodes free")]
    assert host.room_faults(host.read_room("/btrfs", "4096 1000 900 0 0 900"), min_free=5, source="x") == []  # type: ignore[arg-type]


def test_a_segment_a_process_maps_or_holds_open_is_not_stale(tmp_path: Path) -> None:
    mapped, opened, left = (tmp_path / name for name in ("mapped", "opened", "left"))
    for path in (mapped, opened, left):
        path.write_bytes(b"\0" * 4096)
        os.utime(path, (time.time() - 600, time.time() - 600))
    with open(mapped, "r+b") as handle:
        view = mmap.mmap(handle.fileno(), 4096)
    holder = open(opened, "rb")
    try:
        old = host.old_segments(tmp_path, grace=60)
        assert [Path(s.path).name for s in old] == ["left", "mapped", "opened"]
        assert host.held({s.path for s in old}, deadline=time.monotonic() + 10) == {str(mapped), str(opened)}
        assert host.old_segments(tmp_path, grace=3600) == []
    finally:
        view.close()
        holder.close()


def stand_ins(root: Path, node: str = "n2") -> Path:
    """An emulated node's healthy stand-ins, written by the cluster script (no daemon needed)."""
    folder = root / "faults" / node
    folder.mkdir(parents=True)
    inject(root, node, "clear")
    return folder


def inject(root: Path, node: str, *fault: str) -> None:
    subprocess.run([str(CLUSTER), "inject", node, *fault], check=True, env={**os.environ, "SLURM_CLUSTER_DIR": str(root)})


def health(repo: Path, folder: Path, state: Path, *more: str) -> subprocess.CompletedProcess[str]:
    return tooling("--now", NOW, "health-check", "--node", "n2", "--stand-ins", str(folder), "--state", str(state),
                   "--shm", str(state.parent / "shm"), "--json", *more, cwd=repo)


def test_a_healthy_node_exits_0_writes_nothing_and_says_what_it_read(repo: Path, tmp_path: Path) -> None:
    folder, state = stand_ins(tmp_path / "cluster"), tmp_path / "state" / "n2.json"
    (tmp_path / "state" / "shm").mkdir(parents=True)
    before = snapshot(repo)
    done = health(repo, folder, state, "--cluster", "emulated", "--path", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["healthy"] and report["faults"] == [] and report["reason"] is None and not report["drained"]
    sources = {p["name"]: p["source"] for p in report["probes"]}
    assert sources["kernel log"] == f"{folder}/dmesg (stand-in for dmesg)"
    assert sources["gpu counters"] == ("nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER" if REAL_SMI else
                                       f"{folder}/nvidia-smi (stand-in for nvidia-smi -q -d ECC,PAGE_RETIREMENT,"
                                       "ROW_REMAPPER)")
    assert [p["name"] for p in report["probes"]] == ["gpu counters", "kernel log", f"room {tmp_path}",
                                                     "shared memory", "gpu processes"]  # cheapest first
    assert snapshot(repo) == before and not state.exists() and not state.with_name("n2.json.lock").exists()


@pytest.mark.slow  # ~1 s: three checks, each filing
def test_an_xid_is_filed_once_per_node_and_its_return_is_an_occurrence(repo: Path, tmp_path: Path) -> None:
    folder, state = stand_ins(tmp_path / "cluster"), tmp_path / "state" / "n2.json"
    (tmp_path / "state" / "shm").mkdir(parents=True)
    inject(tmp_path / "cluster", "n2", "xid", "79", "1")
    first = health(repo, folder, state, "--cluster", "emulated")
    assert first.returncode == 1, first.stdout + first.stderr
    fault = json.loads(first.stdout)["faults"][0]
    assert (fault["failure_mode"], fault["evidence"], fault["action"]) == ("gpu.fell-off-bus", "Xid 79 GPU 1", "created")
    incident = load_file(str(repo / fault["path"])).data
    assert (incident["scope"], incident["cluster"], incident["nodes"], incident["failure_mode"]) == \
        ("cluster", "emulated", ["n2"], "gpu.fell-off-bus")
    assert incident["title"] == "GPU fell off the bus (Xid 79) on n2"
    assert "handled_by" not in incident  # reported, not drained (no --drain): a person takes the node out
    assert json.loads(first.stdout)["reason"] == f"gpu.fell-off-bus Xid 79 GPU 1, {fault['incident']}"
    again = health(repo, folder, state, "--cluster", "emulated")  # the same line, read again: nothing new
    assert again.returncode == 0 and json.loads(again.stdout)["faults"] == []
    inject(tmp_path / "cluster", "n2", "xid", "79", "1")
    third = json.loads(health(repo, folder, state, "--cluster", "emulated").stdout)["faults"][0]
    assert (third["incident"], third["action"], third["occurrences"]) == (fault["incident"], "occurrence", 2)
    assert load_file(str(repo / fault["path"])).data["occurrences"] == 2
    checked = tooling("validate", cwd=repo)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.slow  # ~1 s: three checks, two filing
def test_a_standing_counter_is_filed_again_only_when_it_changes(repo: Path, tmp_path: Path) -> None:
    folder, state = stand_ins(tmp_path / "cluster"), tmp_path / "state" / "n2.json"
    (tmp_path / "state" / "shm").mkdir(parents=True)
    inject(tmp_path / "cluster", "n2", "ecc", "2")
    first = json.loads(health(repo, folder, state, "--cluster", "emulated").stdout)
    if REAL_SMI:
        pytest.skip("nvidia-smi is installed: the GPUs' own counters are read, not the stand-in")
    fault = first["faults"][0]
    assert (fault["failure_mode"], fault["evidence"], fault["action"]) == \
        ("gpu.hbm-ecc", "GPU 0 DRAM Uncorrectable 2", "created")
    files = snapshot(repo)
    same = json.loads(health(repo, folder, state, "--cluster", "emulated").stdout)
    assert not same["healthy"] and same["faults"][0]["action"] == "known"  # still drains, files nothing
    assert same["reason"] == f"gpu.hbm-ecc GPU 0 DRAM Uncorrectable 2, {fault['incident']}"
    assert snapshot(repo) == files
    inject(tmp_path / "cluster", "n2", "ecc", "3")
    more = json.loads(health(repo, folder, state, "--cluster", "emulated").stdout)["faults"][0]
    assert (more["incident"], more["action"], more["occurrences"]) == (fault["incident"], "occurrence", 2)


def test_without_cluster_or_drain_a_fault_is_reported_and_nothing_written(repo: Path, tmp_path: Path) -> None:
    folder, state = stand_ins(tmp_path / "cluster"), tmp_path / "state" / "n2.json"
    (tmp_path / "state" / "shm").mkdir(parents=True)
    inject(tmp_path / "cluster", "n2", "xid", "48")
    before = snapshot(repo)
    done = tooling("health-check", "--node", "n2", "--stand-ins", str(folder), "--state", str(state),
                   "--shm", str(tmp_path / "state" / "shm"), cwd=repo)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith("n2: unhealthy, not drained (")
    assert done.stdout.splitlines()[0].endswith("): gpu.hbm-ecc Xid 48 GPU 0")
    assert snapshot(repo) == before and not state.parent.joinpath("n2.json").exists()


def test_bad_options_change_nothing(repo: Path, tmp_path: Path) -> None:
    before = snapshot(repo)
    missing = tooling("health-check", "--stand-ins", str(tmp_path / "nowhere"), cwd=repo)
    assert (missing.returncode, missing.stderr) == (2, f"tooling: error: --stand-ins {tmp_path / 'nowhere'}: no such "
                                                       "folder; expected an emulated node's folder of stand-ins "
                                                       "(scripts/slurm-cluster makes $SLURM_CLUSTER_DIR/faults/NODE)\n")
    bad = tooling("health-check", "--cluster", "Not A Name", cwd=repo)
    assert bad.returncode == 2 and bad.stderr.startswith("tooling: error: --cluster: expected lower-case letters")
    assert tooling("health-check", "--min-free", "120", cwd=repo).returncode == 2
    assert snapshot(repo) == before
