"""RunReporter: a real training loop's progress in its run record, never at the loop's expense."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

import without_wiki
from support import CORPUS, snapshot, tmpfs, tooling
from tooling.records.load import load_file
from tooling.resilience import RunReporter
from tooling.resilience.checkpoint import CheckpointManager
from tooling.resilience.distributed_checkpoint import DistributedCheckpointManager

RUN_FILE = Path("runbooks") / "runs" / "demo-7b.yaml"


def train(steps: int, reporter: RunReporter, manager: CheckpointManager | None = None, *,
          save_every: int = 10) -> None:
    """A small real loop: model, AdamW, a loss tensor handed to the reporter each step."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(1, steps + 1):
        x = torch.randn(8, 16)
        loss = (model(x) - x[:, :1]).pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        reporter.step(step, loss=loss, tokens=step * 8)
        if manager is not None and step % save_every == 0:
            manager.save({"model": model.state_dict()}, step)


def record(root: Path) -> dict:  # type: ignore[type-arg]
    return load_file(str(root / RUN_FILE)).data


def test_progress_and_the_last_verified_checkpoint_at_a_bounded_rate(repo: Path, tmp_path: Path) -> None:
    before = record(repo)
    with CheckpointManager(tmp_path / "ckpt", keep=2) as manager:
        with RunReporter("demo-7b", root=repo, every=3600, checkpoints=manager, total_steps=1000) as reporter:
            train(50, reporter, manager)
        # the first step writes at once; then nothing for an hour but the final write at close
        assert reporter.writes == 2
        ckpt = manager.directory.resolve() / manager.entries[-1].file
    after = record(repo)
    progress = after["progress"]
    assert (progress["step"], progress["total_steps"], progress["tokens_seen"]) == (50, 1000, "400")
    assert isinstance(progress["loss"], float)
    assert {k: v for k, v in after["last_good_checkpoint"].items() if k != "saved_at"} == {
        "step": 50, "path": str(ckpt), "verified": True}
    [sample] = after["feed"]["samples"]  # both writes fell into one sampling interval: the newer one stays
    assert sample["step"] == 50 and sample["at"] <= after["feed"]["heartbeat_at"]
    assert after["updated_at"] == before["updated_at"]  # a person's date, not the machine's
    checked = subprocess.run([sys.executable, "-m", "tooling", "validate"], cwd=repo, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_checkpoint_saved_after_the_last_steps_write_is_written_at_close(repo: Path, tmp_path: Path) -> None:
    """A loop's last step is written (flush, or its periodic write), then it saves that step and
    closes: the save is in the record though the step is not new (lab 1 read 400 steps and
    checkpoint 380 once)."""
    with CheckpointManager(tmp_path / "ckpt", keep=2) as manager:
        reporter = RunReporter("demo-7b", root=repo, every=3600, checkpoints=manager)
        train(20, reporter, manager, save_every=10)
        reporter.step(21, loss=0.5, tokens=168)
        assert reporter.flush() and record(repo)["last_good_checkpoint"]["step"] == 20
        manager.save({"step": 21}, 21)
        reporter.close()
    written = record(repo)
    assert (written["progress"]["step"], written["last_good_checkpoint"]["step"]) == (21, 21)


def test_a_damaged_newest_checkpoint_is_not_the_last_good_one(repo: Path, tmp_path: Path) -> None:
    with CheckpointManager(tmp_path / "ckpt", keep=3) as manager:
        reporter = RunReporter("demo-7b", root=repo, every=3600, checkpoints=manager)
        train(30, reporter, manager)
        newest = manager.directory / manager.entries[-1].file
        data = bytearray(newest.read_bytes())
        data[len(data) // 2] ^= 0xFF  # a torn write the manifest does not know about
        newest.write_bytes(bytes(data))
        reporter.close()
    assert record(repo)["last_good_checkpoint"]["step"] == 20


def test_the_last_good_checkpoint_of_sharded_state_is_its_newest_step_folder_that_verifies(
        repo: Path, tmp_path: Path) -> None:
    # issue 23: lab 6's trainer reports the steps of a DistributedCheckpointManager, whose manifest
    # names step folders (every rank's shards), not files; its progress was never written
    model = torch.nn.Linear(8, 4)
    with DistributedCheckpointManager(tmp_path / "sharded", keep=3) as manager:  # one process, no group
        for step in (10, 20):
            manager.save({"model": model.state_dict()}, step)
        newest = manager.directory / manager.entries[-1].folder
        shard = next(p for p in sorted(newest.iterdir()) if p.suffix == ".distcp")
        data = bytearray(shard.read_bytes())
        data[len(data) // 2] ^= 0xFF  # a torn shard the manifest does not know about
        shard.write_bytes(bytes(data))
        with RunReporter("demo-7b", root=repo, every=3600, checkpoints=manager) as reporter:
            reporter.step(21, loss=0.5)
    assert reporter.writes == 1
    good = record(repo)["last_good_checkpoint"]
    assert {k: v for k, v in good.items() if k != "saved_at"} == {
        "step": 10, "path": str((manager.directory / "step-00000010").resolve()), "verified": True}


def test_only_rank_0_reports(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANK", "1")  # as torchrun sets it for the second rank
    before = snapshot(repo)
    with RunReporter("demo-7b", root=repo, every=0) as reporter:
        train(5, reporter)
    assert (reporter.active, reporter.writes, reporter.flush()) == (False, 0, True)
    assert snapshot(repo) == before


@pytest.fixture
def read_only_repo(tmp_path: Path) -> Iterator[Path]:
    """The corpus on a tmpfs of its own, remounted read-only (root only), unmounted afterwards."""
    with tmpfs(tmp_path / "ro", "1m") as mount:
        for folder in ("incidents", "runbooks"):
            subprocess.run(["cp", "-r", str(CORPUS / folder), str(mount)], check=True)
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        yield mount


def test_an_unwritable_repository_costs_one_log_line_and_no_step(read_only_repo: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    before = snapshot(read_only_repo)
    caplog.set_level(logging.WARNING, logger="tooling.resilience.reporter")
    with RunReporter("demo-7b", root=read_only_repo, every=0.01) as reporter:
        for _ in range(20):  # twenty rounds of steps, each asking for a write
            train(5, reporter)
            time.sleep(0.02)
    assert reporter.writes == 0
    assert caplog.messages == [
        f"run reporter: could not write run record demo-7b under {read_only_repo} (training goes on; said once): "
        f"OSError: [Errno 30] Read-only file system: '{read_only_repo / RUN_FILE}'"]
    assert snapshot(read_only_repo) == before


def test_a_record_locked_for_long_never_stalls_the_loop(repo: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Another process holds the record's lock (a person's slow `tooling set`, say) while training runs."""
    path = repo / RUN_FILE
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(path)!r}, os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "print('locked', flush=True); sys.stdin.read()")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        caplog.set_level(logging.WARNING, logger="tooling.resilience.reporter")
        reporter = RunReporter("demo-7b", root=repo, every=0.05, lock_timeout=0.5)
        started = time.monotonic()
        train(200, reporter)
        trained = time.monotonic() - started
        assert not reporter.flush(timeout=2.0)  # still locked: the write waits and gives up, not the loop
    finally:
        holder.communicate("")
    assert reporter.writes == 0 and len(caplog.messages) == 1, caplog.messages
    assert caplog.messages[0].endswith(f"LockTimeout: {path}: still locked by another writer after 0.5 s")
    assert reporter.flush(timeout=30.0)  # the lock is free again: the next write goes through
    reporter.close()
    assert record(repo)["progress"]["step"] == 200
    print(f"200 steps while the record was locked: {trained:.2f} s")


def test_the_writer_process_goes_with_a_killed_trainer(repo: Path) -> None:
    """The writes run in a process of their own (no GIL shared with training); a SIGKILL of the
    trainer, which runs no cleanup, must not leave it behind."""
    trainer = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "from tooling.resilience import RunReporter\n"
        f"reporter = RunReporter('demo-7b', root={str(repo)!r}, every=0.0)\n"
        "reporter.step(1, loss=0.5)\n"
        "assert reporter.flush()\n"
        "print(reporter._writer._process.pid, flush=True)\n"
        "time.sleep(600)")], stdout=subprocess.PIPE, text=True)
    try:
        assert trainer.stdout is not None
        writer = int(trainer.stdout.readline())
        assert Path(f"/proc/{writer}/cmdline").read_bytes().split(b"\0")[1:3] == [b"-m", b"tooling.writers.feed_server"]
        assert record(repo)["progress"]["step"] == 1
    finally:
        trainer.kill()
        trainer.wait()
    deadline = time.monotonic() + 10
    while running(writer):
        assert time.monotonic() < deadline, "the writer process outlived the trainer"
        time.sleep(0.05)


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"  # a zombie has exited
    except FileNotFoundError:
        return False


@pytest.mark.parametrize(("tokens", "written"), [(412_000_000_000, "412B"), (4_915_200, "4.92M"), (400, "400")])
def test_a_token_count_is_written_as_tooling_report_writes_it(repo: Path, tokens: int, written: str) -> None:
    """One fact, one answer: `tooling report --tokens 412000000000` wrote '412000000000' where the
    reporter wrote '412B' (the run schema's own example)."""
    with RunReporter("demo-7b", root=repo, every=3600) as reporter:
        reporter.step(1, loss=torch.tensor(2.5), tokens=torch.tensor(tokens))
        assert reporter.flush()
    by_reporter = record(repo)["progress"]["tokens_seen"]
    result = tooling("report", "demo-7b", "--step", "2", "--tokens", str(tokens), cwd=repo)
    assert result.returncode == 0, result.stderr
    assert (by_reporter, record(repo)["progress"]["tokens_seen"]) == (written, written)


def test_without_a_root_the_reporter_writes_into_the_repository_above_its_folder(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo / "runbooks" / "runs")
    reporter = RunReporter("demo-7b", every=3600)
    monkeypatch.chdir(repo.parent)  # the loop moved on: the repository is the one it was made in
    reporter.step(7, loss=1.5)
    reporter.close()
    assert (reporter.writes, record(repo)["progress"]["step"]) == (1, 7)


@pytest.mark.parametrize("named_by", ["PATH", "TOOLING_EXECUTABLE", "argument"])
def test_without_the_wiki_extra_another_environments_tooling_writes_the_record(repo: Path, tmp_path: Path,
                                                                                named_by: str) -> None:
    """A training environment without the wiki extra (tests/without_wiki.py) cannot write records:
    its reporter starts `tooling report --serve` of another environment (here a launcher outside
    this environment's folder, running the project's own), found on PATH or named, and the record
    is written there, the child reading the same requests as `python -m tooling.writers.feed_server`."""
    other = tmp_path / "other-env" / "bin"
    other.mkdir(parents=True)
    launcher = other / "tooling"
    launcher.write_text(f"#!/bin/sh\nexec {Path(sys.executable).with_name('tooling')} \"$@\"\n")
    launcher.chmod(0o755)
    env = {key: value for key, value in os.environ.items() if key != "TOOLING_EXECUTABLE"}
    env["PATH"] = f"{other}:/usr/bin:/bin" if named_by == "PATH" else "/usr/bin:/bin"
    if named_by == "TOOLING_EXECUTABLE":
        env["TOOLING_EXECUTABLE"] = str(launcher)
    given = f", tooling={str(launcher)!r}" if named_by == "argument" else ""
    done = without_wiki.run(
        "from tooling.resilience import RunReporter\n"
        "from tooling.resilience.record_writer import writer_command\n"
        f"reporter = RunReporter('demo-7b', root={str(repo)!r}, every=3600{given})\n"
        "reporter.step(9, loss=0.25, tokens=72)\n"
        "assert reporter.flush(), 'not written'\n"
        "reporter.close()\n"
        f"print(writer_command({str(launcher)!r} if {bool(given)} else None))\n", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str([str(launcher), "report", "--serve"])
    assert (record(repo)["progress"]["step"], record(repo)["progress"]["loss"]) == (9, 0.25)
