"""CheckpointManager against the abuse of issue 10: lost or damaged manifests, hostile manifest
paths, a reader and a second writer beside the trainer, a full disk, and SIGKILLs mid-save."""
from __future__ import annotations

import errno
import json
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from support import tmpfs
from tooling.resilience import checkpoint
from tooling.resilience.checkpoint import CheckpointManager, CheckpointSaveError, StorageFull, snapshot


def _state(step: int, size: int = 8) -> dict[str, object]:
    return {"w": torch.full((size, size), float(step)), "step": step}


def _matches(state: dict[str, object], step: int) -> bool:
    w = state["w"]
    return state["step"] == step and isinstance(w, torch.Tensor) and bool((w == float(step)).all())


def _manifest_steps(directory: Path) -> list[int]:
    return [e["step"] for e in json.loads((directory / "manifest.json").read_text())["checkpoints"]]


def _ckpt_names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.glob("ckpt-*.pt"))


def _saved(directory: Path, steps: list[int], *, keep: int = 5) -> None:
    with CheckpointManager(directory, keep=keep) as manager:
        for step in steps:
            manager.save(_state(step), step)


def test_keep_must_be_at_least_two(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="keep must be at least 2"):
        CheckpointManager(tmp_path, keep=1)


def test_keeps_the_last_n_and_falls_back_past_a_corrupt_newest(tmp_path: Path) -> None:
    manager = CheckpointManager(tmp_path, keep=2)
    for step in (10, 20, 30):
        manager.save(_state(step, 64), step)
    assert [e.step for e in manager.entries] == [20, 30]
    assert _ckpt_names(tmp_path) == ["ckpt-00000020.pt", "ckpt-00000030.pt"]
    with open(tmp_path / "ckpt-00000030.pt", "r+b") as handle:
        handle.seek(100)
        handle.write(b"\x00" * 16)  # same size, different bytes: only the checksum notices
    state, step = CheckpointManager(tmp_path, keep=2).load_latest()  # type: ignore[misc]
    assert step == 20 and _matches(state, 20)


def test_the_next_writer_removes_abandoned_temporary_files_and_keeps_unnamed_checkpoints(tmp_path: Path) -> None:
    _saved(tmp_path, [1])
    (tmp_path / ".ckpt-00000002.pt.tmp").write_bytes(b"half a checkpoint")  # its writer died: no lock holder
    (tmp_path / ".manifest.json.k3j_x9.tmp").write_text('{"checkpo')
    torch.save(_state(3), tmp_path / "ckpt-00000003.pt")  # complete, but killed before the manifest named it
    (tmp_path / "ckpt-00000004.pt").write_bytes(b"not a checkpoint: not ours to delete either")
    restarted = CheckpointManager(tmp_path, keep=5)
    assert restarted.load_latest()[1] == 1  # type: ignore[index]  # the manifest decides what exists
    restarted.save(_state(5), 5)
    assert sorted(p.name for p in tmp_path.glob("*.tmp")) == []
    assert _ckpt_names(tmp_path) == [f"ckpt-{s:08d}.pt" for s in (1, 3, 4, 5)]
    assert _manifest_steps(tmp_path) == [1, 5]


def test_a_reader_never_touches_the_writers_temporary_file(tmp_path: Path) -> None:
    writer = CheckpointManager(tmp_path, keep=2)
    writer.save(_state(1), 1)
    in_flight = tmp_path / ".ckpt-00000002.pt.tmp"  # as if the writer were inside torch.save right now
    in_flight.write_bytes(b"being written")
    state, step = CheckpointManager(tmp_path).load_latest()  # type: ignore[misc]
    assert step == 1 and _matches(state, 1) and in_flight.exists()
    with pytest.raises(ValueError, match=f"PID {os.getpid()}"):
        CheckpointManager(tmp_path).cleanup()  # the writer holds the lock: not abandoned
    assert in_flight.exists()
    writer.close()
    assert CheckpointManager(tmp_path).cleanup() == [in_flight.name]


def test_a_reader_rereads_the_manifest_at_every_load(tmp_path: Path) -> None:
    writer = CheckpointManager(tmp_path, keep=2)
    writer.save(_state(1), 1)
    reader = CheckpointManager(tmp_path)
    assert reader.load_latest()[1] == 1  # type: ignore[index]
    for step in (2, 3, 4):  # steps 1 and 2 rotate away
        writer.save(_state(step), step)
    state, step = reader.load_latest()  # type: ignore[misc]
    assert step == 4 and _matches(state, 4)


def test_a_reader_survives_a_rotation_between_the_manifest_and_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = CheckpointManager(tmp_path, keep=2)
    for step in (1, 2):
        writer.save(_state(step), step)
    real_read = checkpoint.read_manifest
    rotated: list[int] = []

    def then_the_writer_moves_on(directory: Path) -> object:
        entries = real_read(directory)
        if not rotated:  # right after the reader's first read: steps 1 and 2 rotate away
            for step in (3, 4):
                writer.save(_state(step), step)
            writer.wait()
            rotated.append(4)
        return entries

    monkeypatch.setattr(checkpoint, "read_manifest", then_the_writer_moves_on)
    state, step = CheckpointManager(tmp_path).load_latest()  # type: ignore[misc]
    assert rotated and step == 4 and _matches(state, 4)


def test_background_save_persists_a_snapshot(tmp_path: Path) -> None:
    manager = CheckpointManager(tmp_path, keep=2, background=True)
    state = _state(1)
    manager.save(state, 1)
    state["w"].fill_(99.0)  # type: ignore[attr-defined]  # training goes on and changes the tensors at once
    manager.wait()
    saved, step = manager.load_latest()  # type: ignore[misc]
    assert step == 1 and _matches(saved, 1)
    assert json.loads((tmp_path / "manifest.json").read_text())["checkpoints"][0]["step"] == 1


def test_snapshot_reuses_the_previous_buffers_when_shapes_match() -> None:
    first = snapshot({"w": torch.ones(4, 4), "opt": [torch.zeros(3)], "lr": 0.1})
    source = {"w": torch.full((4, 4), 2.0), "opt": [torch.ones(3)], "lr": 0.2}
    second = snapshot(source, first)
    assert second["w"] is first["w"] and second["opt"][0] is first["opt"][0]  # copied into, not allocated
    assert bool((second["w"] == 2).all()) and bool((second["opt"][0] == 1).all()) and second["lr"] == 0.2
    source["w"].fill_(7.0)
    assert bool((second["w"] == 2).all())  # still a copy
    resized = snapshot({"w": torch.ones(5, 5), "opt": [torch.ones(3, dtype=torch.float64)]}, second)
    assert resized["w"] is not second["w"] and resized["opt"][0].dtype == torch.float64


BROKEN_MANIFESTS = {
    "missing": None,
    "truncated": '{"checkpoints": [{"step": 1, "file": "ckpt-0000',
    "empty": "",
    "not json": "checkpoints: 1, 2, 3\n",
    "a list": "[1, 2, 3]",
    "entries of the wrong shape": '{"checkpoints": [{"step": "3", "file": 3}]}',
    "checkpoints not a list": '{"checkpoints": 3}',
    "not utf-8": b"\xff\xfe\x00{",
    "a folder": "folder",
}


@pytest.mark.filterwarnings("ignore:.*was unreadable")
@pytest.mark.parametrize("broken", list(BROKEN_MANIFESTS))
def test_a_missing_or_unreadable_manifest_is_rebuilt_from_the_verified_files(tmp_path: Path, broken: str) -> None:
    _saved(tmp_path, [1, 2, 3])
    manifest, content = tmp_path / "manifest.json", BROKEN_MANIFESTS[broken]
    manifest.unlink()
    if content == "folder":
        manifest.mkdir()
        (manifest / "inside").write_text("x")
    elif isinstance(content, bytes):
        manifest.write_bytes(content)
    elif content is not None:
        manifest.write_text(content)
    manager = CheckpointManager(tmp_path, keep=5)
    assert [e.step for e in manager.entries] == [1, 2, 3]
    state, step = manager.load_latest()  # type: ignore[misc]
    assert step == 3 and _matches(state, 3)
    assert _ckpt_names(tmp_path) == [f"ckpt-{s:08d}.pt" for s in (1, 2, 3)]  # nothing deleted
    manager.save(_state(4), 4)
    assert _manifest_steps(tmp_path) == [1, 2, 3, 4]
    for entry in json.loads(manifest.read_text())["checkpoints"]:
        data = (tmp_path / entry["file"]).read_bytes()
        assert entry["bytes"] == len(data) and entry["crc32"] == f"{zlib.crc32(data):08x}"
    assert len(list(tmp_path.glob("manifest.json.unreadable-*"))) == (content is not None)  # set aside, kept


def test_a_rebuild_names_only_the_files_that_verify(tmp_path: Path) -> None:
    _saved(tmp_path, [1, 2, 3])
    (tmp_path / "manifest.json").unlink()
    (tmp_path / "ckpt-00000003.pt").write_bytes((tmp_path / "ckpt-00000003.pt").read_bytes()[:-100])  # truncated
    torn = (tmp_path / "ckpt-00000002.pt").read_bytes()
    weights = torch.full((8, 8), 2.0).numpy().tobytes()
    assert weights in torn
    # torn inside the tensor's bytes: same size, only the zip member's own CRC-32 notices
    (tmp_path / "ckpt-00000002.pt").write_bytes(torn.replace(weights, b"\x55" * len(weights)))
    state, step = CheckpointManager(tmp_path).load_latest()  # type: ignore[misc]
    assert step == 1 and _matches(state, 1)
    _saved(tmp_path, [4])
    assert _manifest_steps(tmp_path) == [1, 4] and len(_ckpt_names(tmp_path)) == 4  # the broken ones stay


def test_manifest_paths_outside_the_folder_are_never_followed(tmp_path: Path) -> None:
    folder, outside, absolute = tmp_path / "ckpts", tmp_path / "outside", tmp_path / "elsewhere" / "y.pt"
    folder.mkdir()
    outside.mkdir()
    absolute.parent.mkdir()
    (outside / "x").write_bytes(b"precious")
    absolute.write_bytes(b"precious too")
    crc = f"{zlib.crc32(b'precious'):08x}"
    hostile = [{"step": 0, "file": "../outside/x", "crc32": crc, "bytes": 8},
               {"step": 1, "file": str(absolute), "crc32": crc, "bytes": 12},
               {"step": 2, "file": "ckpt-00000009.pt", "crc32": crc, "bytes": 8}]  # not its step's name
    (folder / "manifest.json").write_text(json.dumps({"checkpoints": hostile}))
    _saved(folder, [3, 4, 5, 6], keep=2)  # rotation drops the oldest entries: the hostile ones
    assert (outside / "x").read_bytes() == b"precious" and absolute.read_bytes() == b"precious too"
    assert _manifest_steps(folder) == [5, 6]
    named = json.loads((folder / "manifest.json").read_text())["checkpoints"]
    (folder / "manifest.json").write_text(json.dumps({"checkpoints": named + [{**hostile[0], "step": 99}]}))
    state, step = CheckpointManager(folder).load_latest()  # type: ignore[misc]
    assert step == 6 and _matches(state, 6)  # the newest entry, outside the folder, is not even opened


HOLDER = textwrap.dedent("""
    import sys, torch
    from tooling.resilience.checkpoint import CheckpointManager
    manager = CheckpointManager(sys.argv[1], keep=3)
    for step in (1, 2, 3):
        manager.save({"w": torch.full((8, 8), float(step)), "step": step}, step)
    print("ready", flush=True)
    sys.stdin.readline()  # the test tries its second writer meanwhile
    for step in (4, 5):
        manager.save({"w": torch.full((8, 8), float(step)), "step": step}, step)
""")


def test_a_second_writer_is_refused_and_the_first_loses_nothing(tmp_path: Path) -> None:
    first = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert first.stdout is not None and first.stdout.readline() == "ready\n"
        second = CheckpointManager(tmp_path, keep=3)
        with pytest.raises(ValueError, match=rf"{re.escape(str(tmp_path))}: another writer \(PID {first.pid}\)"):
            second.save(_state(100), 100)
        with pytest.raises(ValueError, match=f"PID {first.pid}"):
            CheckpointManager(tmp_path, keep=3, background=True).save(_state(100), 100)
        assert first.communicate("go on\n", timeout=60)[0] == "" and first.returncode == 0
    finally:
        first.kill()
    assert _manifest_steps(tmp_path) == [3, 4, 5]
    second.save(_state(6), 6)  # the lock went with the first writer: the second now builds on its steps
    assert _manifest_steps(tmp_path) == [4, 5, 6] and _ckpt_names(tmp_path) == [
        f"ckpt-{s:08d}.pt" for s in (4, 5, 6)]


def test_a_second_writer_in_the_same_process_is_refused(tmp_path: Path) -> None:
    with CheckpointManager(tmp_path, keep=2) as first:
        first.save(_state(1), 1)
        with pytest.raises(ValueError, match="one CheckpointManager saves per folder"):
            CheckpointManager(tmp_path, keep=2).save(_state(2), 2)
        first.save(_state(3), 3)
    assert _manifest_steps(tmp_path) == [1, 3]


def _assert_full_disk_error(error: CheckpointSaveError, folder: Path, need_mib: float) -> None:
    message = str(error)
    assert str(folder) in message and "MiB free" in message, message
    assert f"needs about {need_mib:.2f} MiB" in message, message
    assert not list(folder.glob("*.tmp")) and not list(folder.glob(".*.tmp")), "a temporary file was left"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs: a real full disk, torch's own writer included."""
    with tmpfs(tmp_path / "disk", "2m") as mount:
        yield mount


def test_a_full_disk_fails_clearly_and_smaller_saves_still_fit(small_disk: Path) -> None:
    folder = small_disk / "ckpts"
    manager = CheckpointManager(folder, keep=2)
    manager.save(_state(1, 256), 1)  # 256 KiB
    with pytest.raises(CheckpointSaveError) as failure:
        # 4 MiB on a 2 MiB disk, in bytes the pre-save estimate (tensors, the last checkpoint) cannot
        # see: past the room check (tests/test_storage_guard.py), torch's own writer meets the full disk
        manager.save({**_state(2, 256), "blob": bytes(4 * 2**20)}, 2)
    assert not isinstance(failure.value, StorageFull)
    _assert_full_disk_error(failure.value, folder, 0.25)  # what it could count: its tensors
    manager.save(_state(3, 256), 3)
    manager.close()
    state, step = CheckpointManager(folder).load_latest()  # type: ignore[misc]
    assert step == 3 and _matches(state, 3) and _manifest_steps(folder) == [1, 3]


def test_a_failed_write_is_cleaned_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manager = CheckpointManager(tmp_path, keep=2)
    manager.save(_state(1), 1)
    real_save = torch.save

    def full_disk(state: object, path: Path) -> None:
        Path(path).write_bytes(b"\0" * 1000)  # part of it got out before the disk filled
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(torch, "save", full_disk)
    with pytest.raises(CheckpointSaveError) as failure:
        manager.save(_state(2, 512), 2)  # 1 MiB of floats
    _assert_full_disk_error(failure.value, tmp_path, 1.0)
    assert failure.value.errno == errno.ENOSPC and "No space left on device" in str(failure.value)

    def manifest_full(*args: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(torch, "save", real_save)
    monkeypatch.setattr(checkpoint, "write_manifest", manifest_full)
    with pytest.raises(CheckpointSaveError):
        manager.save(_state(3), 3)
    assert _ckpt_names(tmp_path) == ["ckpt-00000001.pt"]  # the file no manifest names is gone too
    monkeypatch.undo()
    manager.save(_state(4), 4)
    assert _manifest_steps(tmp_path) == [1, 4]


# The two-manager test: a trainer and an evaluation job reading beside it, both real processes.
TRAINER = textwrap.dedent("""
    import sys, time, torch
    from pathlib import Path
    from tooling.resilience.checkpoint import CheckpointManager
    folder, background = Path(sys.argv[1]), sys.argv[2] == "background"
    while not (folder / "reader-ready").exists():
        time.sleep(0.01)
    manager = CheckpointManager(folder / "ckpts", keep=3, background=background)
    for step in range(1, 201):
        manager.save({"w": torch.full((16, 16), float(step)), "step": step}, step)
    manager.close()
    (folder / "trainer-done").touch()
""")
READER = textwrap.dedent("""
    import sys, torch
    from pathlib import Path
    from tooling.resilience.checkpoint import CheckpointManager
    folder = Path(sys.argv[1])
    (folder / "reader-ready").touch()
    seen, last, done = set(), 0, False
    while not done:
        done = (folder / "trainer-done").exists()  # one more load after the trainer finished
        got = CheckpointManager(folder / "ckpts").load_latest()
        if got is not None:
            state, step = got
            assert state["step"] == step and bool((state["w"] == float(step)).all()), f"step {step} holds {state}"
            assert step >= last, f"went back from step {last} to {step}"
            seen.add(step)
            last = step
    print(len(seen), last)
""")


@pytest.mark.parametrize("mode", ["sync", "background"])
def test_a_reader_beside_the_trainer_breaks_nothing(tmp_path: Path, mode: str) -> None:
    trainer = subprocess.Popen([sys.executable, "-c", TRAINER, str(tmp_path), mode],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reader = subprocess.Popen([sys.executable, "-c", READER, str(tmp_path)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    trained = trainer.communicate(timeout=120)
    if trainer.returncode != 0:
        reader.kill()  # it would wait for the trainer's last save forever
    read = reader.communicate(timeout=60)
    assert trainer.returncode == 0, trained[1]
    assert reader.returncode == 0, read[1]
    distinct, last = map(int, read[0].split())
    assert last == 200 and distinct >= 3, f"the reader saw only {distinct} steps: it never ran beside the saves"
    assert _manifest_steps(tmp_path / "ckpts") == [198, 199, 200]
    manager = CheckpointManager(tmp_path / "ckpts")
    for entry in manager.entries:
        assert manager.verify(entry)
        assert _matches(torch.load(tmp_path / "ckpts" / entry.file, weights_only=False), entry.step)


# The SIGKILL harness: a fork server (torch imported once) forks a trainer that saves every
# step and reports each step whose save has completed; the test kills it at a random moment.
FORK_SERVER = textwrap.dedent("""
    import os, sys, traceback, torch
    from tooling.resilience.checkpoint import CheckpointManager
    torch.set_num_threads(1)  # no OpenMP pool: forking stays safe

    def train(folder, background, progress):
        manager = CheckpointManager(folder, keep=3, background=background)
        got = manager.load_latest()
        step = got[1] if got else 0
        while True:
            step += 1
            manager.save({"w": torch.full((16, 16), float(step)), "step": step}, step)
            # a background save returns once the previous one is on disk
            os.write(progress, f"{step - 1 if background else step}\\n".encode())

    for line in sys.stdin:
        folder, mode, progress = line.split()
        pid = os.fork()
        if pid == 0:
            try:
                train(folder, mode == "background", os.open(progress, os.O_WRONLY | os.O_APPEND | os.O_CREAT))
            except BaseException:
                traceback.print_exc()
            os._exit(1)
        print(pid, flush=True)
        print(os.waitpid(pid, 0)[1], flush=True)
""")


@pytest.fixture(scope="module")
def fork_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    errors = tmp_path_factory.mktemp("fork-server") / "stderr"
    with open(errors, "w") as sink:
        server = subprocess.Popen([sys.executable, "-c", FORK_SERVER], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=sink, text=True)
    yield server, errors
    server.kill()
    server.wait()


KILLS = 100
PATIENT = 10  # every PATIENT-th trainer is killed only after it completed a save past the last resume


def _saved_past(progress: Path, step: int, timeout: float = 60.0) -> None:
    """Wait until the trainer reports a completed save after ``step``: on a machine busy enough that
    no save completes within the random kills' 60 ms (a load of 20 on two cores did that), the
    resume from a completed save would never be checked."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if progress.exists() and max(map(int, progress.read_text().split()), default=0) > step:
            return
        time.sleep(0.01)
    raise AssertionError(f"no save completed past step {step} in {timeout:.0f} s")


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["sync", "background"])
def test_sigkill_at_random_moments_never_loses_a_completed_save(
        tmp_path: Path, mode: str, fork_server: tuple[subprocess.Popen[str], Path]) -> None:
    server, errors = fork_server
    assert server.stdin is not None and server.stdout is not None
    folder, progress, rng = tmp_path / "ckpts", tmp_path / "progress", random.Random(f"kills-{mode}")
    loaded, mid_save, unloadable, mismatched = 0, 0, [], []
    for index in range(KILLS):
        server.stdin.write(f"{folder} {mode} {progress}\n")
        server.stdin.flush()
        pid = int(server.stdout.readline())
        if index % PATIENT == PATIENT - 1:
            _saved_past(progress, loaded)
        time.sleep(rng.uniform(0.002, 0.06))
        os.kill(pid, signal.SIGKILL)
        status = int(server.stdout.readline())
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, \
            f"the trainer died on its own (status {status}): {errors.read_text()}"
        completed = max(map(int, progress.read_text().split()), default=0) if progress.exists() else 0
        mid_save += any(folder.glob(".ckpt-*.pt.tmp"))
        manager = CheckpointManager(folder)  # a fresh start: what the next run does first
        for entry in manager.entries:
            try:
                state = torch.load(folder / entry.file, weights_only=False)
            except Exception as exc:  # counted, then asserted on with every case listed
                unloadable.append(f"{entry.file}: {exc}")
                continue
            if not (manager.verify(entry) and _matches(state, entry.step)):
                mismatched.append(entry.file)
        got = manager.load_latest()
        step = got[1] if got else 0
        assert got is None or _matches(got[0], step)
        assert step >= completed and step >= loaded, \
            f"resumed from step {step}, but step {max(completed, loaded)} had completed saving"
        loaded = step
    print(f"{mode}: {KILLS} SIGKILLs, {mid_save} mid-save; reached step {loaded}")
    assert not unloadable and not mismatched, f"unloadable: {unloadable}; mismatched: {mismatched}"
    assert loaded > 0 and mid_save >= KILLS // 10, f"the kills did not land mid-save ({mid_save} of {KILLS})"
