"""The storage-capacity guard (issue 24, item 2) on real small tmpfs mounts: both checkpoint
managers refuse a save their file system has no room or inodes for before a byte of it lands,
in one line the catalogue files; the node health check warns at the catalogue's thresholds
(filed first) and prunes a checkpoint folder beyond keep-N when told."""
from __future__ import annotations

import errno
import json
import logging
import math
import os
import subprocess
import sys
import textwrap
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from support import PROJECT, tmpfs, tooling
from test_health import health, stand_ins
from tooling.health import host
from tooling.health.faults import capacity_thresholds
from tooling.records.load import load_file
from tooling.resilience import capacity, retention
from tooling.resilience.checkpoint import CheckpointManager, CheckpointSaveError, StorageFull
from tooling.resilience.distributed_checkpoint import DistributedCheckpointManager
from tooling.resilience.manifest import Entry, read_manifest, write_manifest

pytestmark = pytest.mark.filterwarnings("ignore:torch.distributed is disabled, unavailable or uninitialized")


def _state(step: int, size: int = 256) -> dict[str, object]:
    return {"w": torch.full((size, size), float(step)), "step": step}  # 256 x 256 floats: 256 KiB


def _free(path: Path) -> int:
    info = os.statvfs(path)
    return info.f_bavail * info.f_frsize


def _fill(disk: Path, *, leave: int, name: str = "ballast") -> None:
    """Write a file that leaves about ``leave`` bytes of ``disk`` free (to the page)."""
    with open(disk / name, "ab") as handle:
        handle.write(bytes(max(0, _free(disk) - leave)))


def _fill_inodes(disk: Path, *, leave: int) -> None:
    (disk / "many").mkdir(exist_ok=True)
    for n in range(os.statvfs(disk).f_favail - leave):
        (disk / "many" / f"f{n}").touch()


def _listing(folder: Path) -> tuple[int, list[tuple[str, int, int]]]:
    """The folder's own mtime (a file created and removed changes it) and every entry's name, size, mtime."""
    entries = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir())
    return folder.stat().st_mtime_ns, entries


def _mib(n: float) -> str:
    return f"{n / 2**20:.2f} MiB"


def _space_message(folder: Path, disk: Path, step: int, free: int, estimate: int, basis: str) -> str:
    need = math.ceil(estimate * 1.05) + 64 * 1024
    return (f"{folder}: step {step} not saved, refused before writing a byte: no space left on device on the tmpfs "
            f"file system at {disk}: {_mib(free)} free, the checkpoint needs about {_mib(need)} ({basis}, "
            f"{_mib(estimate)}, and a 5% margin): {_mib(need - free)} short")


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "disk", "4m") as mount:
        yield mount


@pytest.mark.parametrize("background", [False, True], ids=["sync", "background"])
def test_a_save_without_room_is_refused_before_a_byte_lands(disk: Path, background: bool,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    folder = disk / "ckpts"
    manager = CheckpointManager(folder, keep=2, background=background)
    manager.save(_state(1), 1)
    manager.wait()
    last = read_manifest(folder)[-1].bytes  # type: ignore[index]
    _fill(disk, leave=200 * 1024)  # less than one more checkpoint of 256 KiB
    before, free = _listing(folder), _free(disk)
    with caplog.at_level(logging.ERROR, logger="tooling.resilience.capacity"):
        with pytest.raises(StorageFull) as refused:
            manager.save(_state(2), 2)
    assert _listing(folder) == before and _free(disk) == free  # nothing created, even for a moment
    message = _space_message(folder, disk, 2, free, last, "the last checkpoint's size")
    assert str(refused.value) == message
    assert [r.getMessage() for r in caplog.records] == [message]  # logged first: the line tooling watch files
    assert isinstance(refused.value, CheckpointSaveError) and refused.value.errno == errno.ENOSPC
    (disk / "ballast").unlink()
    manager.save(_state(3), 3)
    manager.close()
    assert [e.step for e in read_manifest(folder) or []] == [1, 3]


def test_a_state_that_grew_is_measured_by_its_tensors(disk: Path) -> None:
    folder = disk / "ckpts"
    with CheckpointManager(folder, keep=2) as manager:
        manager.save(_state(1, 64), 1)  # 16 KiB
        free = _free(disk)
        with pytest.raises(StorageFull) as refused:
            manager.save(_state(2, 1024), 2)  # 4 MiB of tensors on a 4 MiB disk
    assert str(refused.value) == _space_message(folder, disk, 2, free, 4 * 2**20, "the state's tensors")


def test_a_save_without_inodes_is_refused_before_a_byte_lands(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "disk", "4m", inodes=64) as disk:
        folder = disk / "ckpts"
        with CheckpointManager(folder, keep=2) as manager:
            manager.save(_state(1, 16), 1)
            _fill_inodes(disk, leave=1)
            before = _listing(folder)
            with pytest.raises(StorageFull) as refused:
                manager.save(_state(2, 16), 2)
            assert _listing(folder) == before
        assert str(refused.value) == (
            f"{folder}: step 2 not saved, refused before writing a byte: out of inodes on the tmpfs file system at "
            f"{disk}: 1 inode free, the checkpoint needs 2 (its file and the manifest's new copy): 1 short")


@pytest.mark.parametrize("async_save", [False, True], ids=["sync", "async"])
def test_the_sharded_manager_refuses_before_a_byte_lands(disk: Path, async_save: bool) -> None:
    folder = disk / "ckpt"
    with DistributedCheckpointManager(folder, keep=2, async_save=async_save) as manager:
        manager.save({"w": torch.ones(64 * 1024)}, 1)  # 256 KiB
        manager.wait()
        step = manager.entries[-1]
        size = sum(s.bytes for s in step.shards)
        _fill(disk, leave=200 * 1024)
        before, free = _listing(folder)[1], _free(disk)
        with pytest.raises(StorageFull) as refused:
            manager.save({"w": torch.ones(64 * 1024)}, 2)
            manager.wait()  # async: the refusal comes from the background thread, as every async error
        # DCP's planning made the step's temporary folder (no byte in it); the refusal removed it
        assert _listing(folder)[1] == before and _free(disk) == free
    assert str(refused.value) == _space_message(folder, disk, 2, free, size, "the last step's files")
    assert refused.value.errno == errno.ENOSPC


def test_the_sharded_manager_counts_the_plans_writes_on_a_first_save(disk: Path) -> None:
    folder = disk / "ckpt"
    _fill(disk, leave=1024 * 1024)
    with DistributedCheckpointManager(folder, keep=2) as manager:
        manager.cleanup()  # takes the folder: its lock file holds a page
        free = _free(disk)
        with pytest.raises(StorageFull) as refused:  # 2 MiB of tensors in DCP's plan on a disk with 1 MiB free
            manager.save({"w": torch.ones(512 * 1024)}, 1)
    assert str(refused.value) == _space_message(folder, disk, 1, free, 2**21, "the step's planned writes")
    assert sorted(p.name for p in folder.iterdir()) == [".lock", "manifest.dcp.json"]


def test_the_sharded_manager_counts_the_inodes_of_a_step(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "disk", "4m", inodes=64) as disk:
        folder = disk / "ckpt"
        with DistributedCheckpointManager(folder, keep=2) as manager:
            manager.save({"w": torch.ones(16)}, 1)
            _fill_inodes(disk, leave=3)
            with pytest.raises(StorageFull) as refused:
                manager.save({"w": torch.ones(16)}, 2)
        assert str(refused.value).endswith(  # DCP's planning made the step's folder: 2 inodes left for 3 files
            f"out of inodes on the tmpfs file system at {disk}: 2 inodes free, the checkpoint needs 3 (each rank's "
            "file, its .metadata and the manifest's new copy): 1 short")


def test_the_mount_point_and_type_are_read_from_the_mount_table(disk: Path) -> None:
    (disk / "a b" / "c").mkdir(parents=True)  # a space: \\040 in /proc/self/mounts
    assert capacity.mount_of(disk / "a b" / "c") == (str(disk), "tmpfs")
    with tmpfs(disk / "a b" / "inner", "1m") as inner:  # the longest mount point above the path wins
        assert capacity.mount_of(inner) == (str(inner), "tmpfs")


TRAINER = textwrap.dedent("""
    import sys, torch
    from tooling.resilience.checkpoint import CheckpointManager
    with CheckpointManager(sys.argv[1], keep=2) as manager:
        manager.save({"w": torch.zeros(256, 256)}, int(sys.argv[2]))
""")


def _train(folder: Path, step: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", TRAINER, str(folder), str(step)], capture_output=True, text=True,
                          cwd=PROJECT, env={**os.environ, "PYTHONPATH": str(PROJECT)}, timeout=120)


@pytest.mark.slow  # ~5 s: a trainer process importing torch, a check, a scan
def test_the_warning_incident_is_filed_before_the_save_is_refused(repo: Path, tmp_path: Path) -> None:
    """The issue's "must show": a health check warns at 80%, files the incident; later the
    trainer's save is refused in one line, which the catalogue reads as the same failure."""
    folder, state = stand_ins(tmp_path / "cluster"), tmp_path / "state" / "n2.json"
    (tmp_path / "state" / "shm").mkdir(parents=True)
    with tmpfs(tmp_path / "disk", "4m") as disk:
        ckpts = disk / "ckpts"
        with CheckpointManager(ckpts, keep=2) as manager:
            manager.save({"w": torch.zeros(256, 256)}, 1)
        _fill(disk, leave=600 * 1024)  # about 85% used
        warned = health(repo, folder, state, "--cluster", "emulated", "--path", str(ckpts))
        assert warned.returncode == 0, warned.stdout + warned.stderr
        report = json.loads(warned.stdout)
        fault = report["faults"][0]
        assert report["healthy"] and not report["drained"] and report["reason"] is None
        assert (fault["failure_mode"], fault["warning"], fault["action"]) == ("storage.disk-full", True, "created")
        assert fault["lines"] == [f"{ckpts}: 80% or more of its space used (the storage-capacity-guard warns at 80% "
                                  "and 90%)"]
        incident = repo / fault["path"]
        assert load_file(str(incident)).data["failure_mode"] == "storage.disk-full"

        _fill(disk, leave=200 * 1024, name="more")
        refused = _train(ckpts, 2)
        assert refused.returncode == 1 and incident.exists()  # the warning was there first
        line = next(line for line in refused.stderr.splitlines() if "not saved" in line)
        assert line.startswith(f"{ckpts}: step 2 not saved, refused before writing a byte: no space left on device "
                               f"on the tmpfs file system at {disk}: ")
        assert f"StorageFull: {line}" in refused.stderr  # the exception says the same line
        assert sorted(p.name for p in ckpts.iterdir()) == [".lock", "ckpt-00000001.pt", "manifest.json"]
    log = tmp_path / "train.log"
    log.write_text(line + "\n")
    scanned = tooling("scan", "--json", str(log), cwd=repo)
    assert [d["failure_mode"] for d in json.loads(scanned.stdout)] == ["storage.disk-full"]


def test_the_thresholds_are_the_catalogues() -> None:
    assert capacity_thresholds() == (80, 90)  # "Alerts on df -h and df -i ... at 80% and 90%"


@given(total=st.integers(1, 10**6), used=st.integers(0, 10**6), reserved=st.integers(0, 10**5),
       inodes=st.integers(0, 10**4), used_inodes=st.integers(0, 10**4))
def test_a_warning_names_the_highest_threshold_crossed_as_df_counts_use(total: int, used: int, reserved: int,
                                                                       inodes: int, used_inodes: int) -> None:
    used, reserved = min(used, total), min(reserved, total - min(used, total))
    free_to_users = total - used - reserved
    used_inodes = min(used_inodes, inodes)
    room = host.Room("/ckpt", total * 4096, free_to_users * 4096, inodes, inodes - used_inodes,
                     (total - used) * 4096)
    warned = {f.standing: f for f in host.room_warnings(room, thresholds=(80, 90), faults=[], source="stat -f")}
    df_use = math.ceil(100 * used / (used + free_to_users)) if used + free_to_users else 0
    df_iuse = math.ceil(100 * used_inodes / inodes) if inodes else 0
    for name, use in (("space", df_use), ("inodes", df_iuse)):
        level = 90 if use >= 90 else 80 if use >= 80 else None
        found = warned.get(f"{name} /ckpt")
        assert (found is None) == (level is None)
        if found is not None:
            assert found.warning and found.evidence == f"/ckpt {use}% {name} used, warning at {level}%"
            assert found.mode.id == ("storage.disk-full" if name == "space" else "storage.inode-exhaustion")


@pytest.mark.slow  # ~2 s: five checks, three filing
def test_the_probe_warns_at_80_and_90_then_faults_under_min_free(repo: Path, tmp_path: Path) -> None:
    folder, state = stand_ins(tmp_path / "cluster"), tmp_path / "state" / "n2.json"
    (tmp_path / "state" / "shm").mkdir(parents=True)
    with tmpfs(tmp_path / "disk", "4m") as disk:
        def check(used_percent: int) -> tuple[int, dict]:
            (disk / "ballast").unlink(missing_ok=True)
            with open(disk / "ballast", "wb") as handle:  # whole pages: df's Use% rounds up
                handle.write(bytes(1024 * used_percent // 100 * 4096))
            done = health(repo, folder, state, "--cluster", "emulated", "--path", str(disk))
            return done.returncode, json.loads(done.stdout)

        code, calm = check(70)
        assert code == 0 and calm["faults"] == [] and calm["probes"][2]["status"] == "ok"
        code, first = check(85)
        assert code == 0 and first["probes"][2]["status"] == "warn" and first["reason"] is None
        assert [(f["evidence"], f["action"]) for f in first["faults"]] == [
            (f"{disk} 85% space used, warning at 80%", "created")]
        code, same = check(86)
        assert code == 0 and same["faults"][0]["action"] == "known"  # the same threshold: nothing filed again
        code, higher = check(92)
        assert code == 0 and [(f["evidence"], f["action"], f["occurrences"]) for f in higher["faults"]] == [
            (f"{disk} 92% space used, warning at 90%", "occurrence", 2)]
        code, full = check(98)
        assert code == 1 and not full["healthy"] and not full["faults"][0]["warning"]
        assert full["reason"] == f"storage.disk-full {disk} 2% free, {first['faults'][0]['incident']}"
    checked = tooling("validate", cwd=repo)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _fake_checkpoints(folder: Path, steps: list[int], torn: set[int]) -> None:
    """A manager's folder without torch: files with their size and CRC-32 in the manifest, those of
    ``torn`` then changed (what a retention must not trust)."""
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for step in steps:
        data = step.to_bytes(4, "big") * 64
        (folder / f"ckpt-{step:08d}.pt").write_bytes(data)
        entries.append(Entry(step, f"ckpt-{step:08d}.pt", f"{zlib.crc32(data):08x}", len(data)))
    write_manifest(folder, entries)
    for step in torn:
        (folder / f"ckpt-{step:08d}.pt").write_bytes(b"torn")


@pytest.mark.slow  # ~3 s: every example writes a folder and its manifest, fsynced
@given(count=st.integers(0, 8), keep=st.integers(2, 5), torn=st.sets(st.integers(0, 7)))
def test_pruning_keeps_the_newest_n_and_the_newest_two_that_verify(tmp_path_factory: pytest.TempPathFactory,
                                                                 count: int, keep: int, torn: set[int]) -> None:
    folder = tmp_path_factory.mktemp("ckpts")
    steps = [10 * (n + 1) for n in range(count)]
    torn_steps = {steps[n] for n in torn if n < count}
    _fake_checkpoints(folder, steps, torn_steps)
    pruned = retention.prune(folder, keep=keep)
    good = [s for s in steps if s not in torn_steps]
    expected = sorted(set(steps[-keep:]) | set(good[-2:])) if count > keep else steps
    assert list(pruned.kept) == expected and list(pruned.removed) == [s for s in steps if s not in expected]
    assert [e.step for e in read_manifest(folder) or []] == expected
    assert sorted(p.name for p in folder.glob("ckpt-*.pt")) == [f"ckpt-{s:08d}.pt" for s in expected]
    assert not list(folder.glob(".*.tmp"))


@pytest.mark.slow  # ~1.5 s: DCP saves, three checks
def test_the_health_check_prunes_checkpoint_folders_no_job_writes(repo: Path, tmp_path: Path) -> None:
    folder, state = stand_ins(tmp_path / "cluster"), tmp_path / "state" / "n2.json"
    (tmp_path / "state" / "shm").mkdir(parents=True)
    single, sharded = tmp_path / "single", tmp_path / "sharded"
    _fake_checkpoints(single, [1, 2, 3, 4, 5], torn={5})
    with DistributedCheckpointManager(sharded, keep=4) as manager:
        for step in (1, 2, 3):
            manager.save({"w": torch.full((16,), float(step))}, step)
    writer = CheckpointManager(tmp_path / "busy", keep=3)
    writer.save(_state(1, 4), 1)  # holds the folder's lock: a job saving there now
    done = health(repo, folder, state, "--prune-keep", "2", "--path", str(single), "--path", str(sharded),
                  "--path", str(tmp_path / "busy"), "--path", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    pruned = json.loads(done.stdout)["pruned"]
    assert [(p["path"], p["removed"], p["kept"]) for p in pruned] == [
        (str(single), [1, 2], [3, 4, 5]), (str(sharded), [1], [2, 3]), (str(tmp_path / "busy"), [], None)]
    assert pruned[2]["error"] == (f"{tmp_path / 'busy'}: another writer (PID {os.getpid()}) holds "
                                  f"{tmp_path / 'busy' / '.lock'}: a job saves there now, and its manager prunes "
                                  "beyond its own keep; nothing pruned")
    assert sorted(p.name for p in sharded.iterdir()) == [".lock", "manifest.dcp.json", "step-00000002",
                                                         "step-00000003"]
    writer.close()
    bad = tooling("health-check", "--prune-keep", "1", cwd=repo)
    assert bad.returncode == 2 and "--prune-keep: expected a whole number >= 2" in bad.stderr


@pytest.mark.slow  # ~1 s: the script starts the real executable
def test_the_installed_health_check_prunes_when_its_settings_say(tmp_path: Path) -> None:
    """scripts/slurm/health-check, as slurmd runs it, with TOOLING_HEALTH_PRUNE_KEEP in its settings."""
    cluster = tmp_path / "cluster"
    folder = stand_ins(cluster)
    (tmp_path / "shm").mkdir()
    ckpts = tmp_path / "ckpts"
    _fake_checkpoints(ckpts, [1, 2, 3, 4], torn=set())
    hook = tmp_path / "hooks" / "health-check"
    hook.parent.mkdir()
    hook.symlink_to(PROJECT / "scripts" / "slurm" / "health-check")  # its settings: beside the name it was run by
    (hook.parent / "tooling-health.conf").write_text(
        f"TOOLING_HEALTH_PATHS={ckpts}\nTOOLING_HEALTH_PRUNE_KEEP=2\nTOOLING_HEALTH_STAND_INS={folder.parent}\n"
        f"TOOLING_HEALTH_STATE={tmp_path / 'state'}\nTOOLING_HEALTH_SHM={tmp_path / 'shm'}\n"
        f"TOOLING_HEALTH_LOG={tmp_path / 'check.log'}\n")
    done = subprocess.run([str(hook)], env={**os.environ, "SLURMD_NODENAME": "n2"}, timeout=120)
    assert done.returncode == 0, (tmp_path / "check.log").read_text()
    assert f"pruned {ckpts}: steps 1, 2 (" in (tmp_path / "check.log").read_text()
    assert [e.step for e in read_manifest(ckpts) or []] == [3, 4]
