"""DistributedCheckpointManager (issue 15) with real ranks: processes forked by tests/dcp_ranks.py,
each job a fresh gloo group with FSDP2 and DCP, and real SIGKILLs at random moments of a save."""
from __future__ import annotations

import contextlib
import json
import os
import queue
import random
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from support import PROJECT, tmpfs
from tooling.resilience.distributed_checkpoint import CheckpointSaveError, DistributedCheckpointManager

# one process without a process group is a case the manager means (its own filter says so at
# import; pytest resets the filters of each test)
pytestmark = pytest.mark.filterwarnings("ignore:torch.distributed is disabled, unavailable or uninitialized")
SERVER = PROJECT / "tests" / "dcp_ranks.py"
WORLD = 4
RUNS = 50


class Ranks:
    """The job server of tests/dcp_ranks.py: each start() forks a fresh job of ``world`` ranks."""

    def __init__(self, tmp: Path) -> None:
        self.tmp, self.stderr = tmp, tmp / "ranks.stderr"
        self.errors = self.stderr.open("w")  # the ranks' tracebacks, shown when a job fails
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER)], cwd=PROJECT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.errors, text=True, env={**os.environ, "PYTHONPATH": str(PROJECT)})
        self.lines: queue.Queue[str] = queue.Queue()  # a thread reads them: a timeout, never a hang
        threading.Thread(target=lambda: [self.lines.put(line) for line in self.process.stdout], daemon=True).start()

    def start(self, program: str, world: int, **arguments: Any) -> None:
        job = [program, world, {**arguments, "store_dir": str(self.tmp)}]
        self.process.stdin.write(json.dumps(job, default=str) + "\n")  # type: ignore[union-attr]
        self.process.stdin.flush()  # type: ignore[union-attr]
        # a pidfd names the process itself: once the server has reaped it, a signal fails
        # (ProcessLookupError) instead of reaching whatever process got the number since
        self.pidfds = [os.pidfd_open(pid) for pid in json.loads(self._line(60))]

    def kill(self, ranks: Iterable[int]) -> None:
        for rank in ranks:
            with contextlib.suppress(ProcessLookupError):  # it ended already (its peer died)
                signal.pidfd_send_signal(self.pidfds[rank], signal.SIGKILL)

    def finish(self, timeout: float = 120) -> list[int]:
        """The wait statuses of the job's ranks, once all have ended."""
        statuses = json.loads(self._line(timeout))
        for fd in self.pidfds:
            os.close(fd)
        return statuses

    def run(self, program: str, world: int, **arguments: Any) -> None:
        """One job to its end; every rank must exit 0."""
        self.start(program, world, **arguments)
        statuses = self.finish()
        assert statuses == [0] * world, f"{program} failed: {statuses}\n{self.stderr.read_text()[-4000:]}"

    def _line(self, timeout: float) -> str:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no answer from the job server in {timeout} s\n"
                                 f"{self.stderr.read_text()[-4000:]}") from None

    def close(self) -> None:
        self.process.stdin.close()  # type: ignore[union-attr]
        self.process.wait(timeout=60)
        self.errors.close()


@pytest.fixture(scope="module")
def ranks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ranks]:
    server = Ranks(tmp_path_factory.mktemp("ranks"))
    yield server
    server.close()


def events(log: Path, kind: str) -> list[list[str]]:
    """The log's lines of one kind, split into fields (the kind left off)."""
    if not log.exists():
        return []
    return [line.split()[1:] for line in log.read_text().splitlines() if line.startswith(f"{kind} ")]


def wait_for(log: Path, job: int, rank: int, step: int, server: Ranks, timeout: float = 60) -> None:
    """Until rank ``rank`` of ``job`` is about to save ``step``."""
    deadline = time.monotonic() + timeout
    while [str(job), str(rank), str(step)] not in [e[:3] for e in events(log, "state")]:
        if time.monotonic() > deadline:
            raise AssertionError(f"rank {rank} of job {job} never began saving step {step}\n"
                                 f"{server.stderr.read_text()[-4000:]}")
        time.sleep(0.002)


def manifest(folder: Path) -> list[dict[str, Any]]:
    path = folder / "manifest.dcp.json"
    return json.loads(path.read_text())["checkpoints"] if path.exists() else []


def unverified(folder: Path) -> list[str]:
    """Every file of every step the manifest names whose size or CRC-32 differs from its record,
    and every step that does not name DCP's .metadata and one file per rank that saved it (read
    here, by the test's own code, not the manager's)."""
    bad = []
    for entry in manifest(folder):
        files = sorted(shard["file"] for shard in entry["shards"])
        if files != [".metadata"] + [f"__{rank}_0.distcp" for rank in range(entry["world_size"])]:
            bad.append(f"{entry['folder']}: names {files}")
        for shard in entry["shards"]:
            path = folder / entry["folder"] / shard["file"]
            data = path.read_bytes() if path.is_file() else b""
            if len(data) != shard["bytes"] or f"{zlib.crc32(data):08x}" != shard["crc32"]:
                bad.append(f"{entry['folder']}/{shard['file']}")
    return bad


def check_resume(log: Path, job: int, expected: int, world: int = WORLD) -> None:
    """Every rank of ``job`` resumed from step ``expected``, all from one and the same save: each
    rank's model and optimizer shards, data position and RNG states are exactly those it had when
    that save began, and every rank's shard of the stamp carries that save's stamp alone."""
    began = {(int(saver), int(rank), int(step)): (digest, position, rng)
             for saver, rank, step, digest, position, rng, _ in events(log, "state")}
    resumes = [e[1:] for e in events(log, "resume") if int(e[0]) == job]
    assert sorted(int(e[0]) for e in resumes) == list(range(world)), f"job {job}: {resumes}"
    for rank, step, digest, stamps, saver, position, rng, _ in resumes:
        assert int(step) == expected, f"job {job}: rank {rank} resumed from step {step}, expected {expected}"
        if expected == 0:
            continue
        assert stamps == f"{int(saver) * 1000 + expected}", \
            f"job {job}: rank {rank}'s stamps {stamps} are not job {saver}'s save of step {expected} alone"
        assert (digest, position, rng) == began[(int(saver), int(rank), expected)], \
            f"job {job}: rank {rank}'s state differs from what it had when job {saver} saved step {expected}"
    assert len({e[4] for e in resumes}) == 1, f"job {job}: ranks resumed from saves of different jobs: {resumes}"


def kill_left(folder: Path, in_manifest: list[int]) -> str:
    """What a kill left behind: a save's temporary folder, a renamed step the manifest does not
    name yet, or neither."""
    names = [p.name for p in folder.iterdir()]
    if any(n.startswith(".step-") and not n.endswith(".retired.tmp") for n in names):
        return "a temporary step folder (killed while writing, syncing or gathering)"
    if any(n.startswith("step-") and int(n[5:]) not in in_manifest for n in names):
        return "a renamed step no manifest names (killed before the manifest)"
    return "no save in flight, or its commit complete"


@pytest.mark.slow  # jobs of several processes
def test_sigkill_of_one_rank_or_the_whole_job_mid_save_never_loses_or_mixes_a_committed_step(
        ranks: Ranks, tmp_path: Path) -> None:
    rng = random.Random(15)
    folder, log = tmp_path / "ckpt", tmp_path / "log"
    began = time.monotonic()
    ranks.run("train", WORLD, folder=folder, log=log, job=0, until=3)
    starts = {tuple(e[:3]): float(e[-1]) for e in events(log, "state")}
    save_time = statistics.median(float(e[-1]) - starts[tuple(e[:3])] for e in events(log, "saved"))
    newest, tally, victims = 3, Counter(), Counter()
    for run in range(1, RUNS + 1):
        async_save = run % 4 == 0  # every fourth job saves asynchronously
        ranks.start("train", WORLD, folder=folder, log=log, job=run, async_save=async_save)
        victim = rng.randrange(WORLD + 1)  # WORLD: the whole job at once
        wait_for(log, run, victim % WORLD, newest + rng.randint(1, 2), ranks)
        time.sleep(rng.uniform(0, 1.5 * save_time))  # state is noted just before save(): mid-save
        if victim == WORLD:
            ranks.kill(range(WORLD))
        else:  # one rank dies; the others go on until they fail on it, or are killed as torchrun does
            ranks.kill([victim])
            time.sleep(rng.uniform(0, 0.2))
            ranks.kill(range(WORLD))
        statuses = ranks.finish()  # the others died of the kill, or of their peer's death (gloo's error)
        assert statuses[victim % WORLD] == signal.SIGKILL and 0 not in statuses, f"run {run}: {statuses}"
        check_resume(log, run, newest)  # this job's own start, from what the previous kill left
        named = [entry["step"] for entry in manifest(folder)]
        assert unverified(folder) == [], f"run {run}: named files that do not verify"
        assert named == sorted(named) and named[-1] >= newest, f"run {run}: the manifest went back: {named}"
        tally[kill_left(folder, named)] += 1
        victims["the whole job" if victim == WORLD else "one rank"] += 1
        newest = named[-1]
    ranks.run("train", WORLD, folder=folder, log=log, job=RUNS + 1, until=newest + 1)
    check_resume(log, RUNS + 1, newest)
    assert unverified(folder) == [] and not list(folder.glob(".*.tmp")), "leftovers after a clean end"
    print(f"{RUNS} SIGKILLs ({dict(victims)}) in {time.monotonic() - began:.0f} s, median save "
          f"{save_time * 1000:.0f} ms, reaching step {newest + 1}; what each left: {dict(tally)}")
    assert tally["a temporary step folder (killed while writing, syncing or gathering)"] >= RUNS // 5, \
        f"too few kills landed in the middle of a save: {dict(tally)}"


@pytest.mark.slow  # jobs of several processes
@pytest.mark.parametrize("flipped", [".metadata", "__2_0.distcp"])
def test_a_flipped_byte_in_one_shard_makes_every_rank_fall_back_together(
        ranks: Ranks, tmp_path: Path, flipped: str) -> None:
    folder, log = tmp_path / "ckpt", tmp_path / "log"
    ranks.run("train", WORLD, folder=folder, log=log, job=1, until=3)
    shard = folder / "step-00000003" / flipped
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0x01  # same size, one bit: only the checksum can tell
    shard.write_bytes(bytes(data))
    # each rank verifies a quarter of the files: this one only rank 0 (.metadata) or rank 3
    ranks.run("train", WORLD, folder=folder, log=log, job=2, until=3)
    check_resume(log, 2, 2)
    ranks.run("train", WORLD, folder=folder, log=log, job=3, until=3)  # step 3, saved again by job 2
    check_resume(log, 3, 3)
    assert [e["step"] for e in manifest(folder)] == [1, 2, 3] and unverified(folder) == []


@pytest.mark.slow  # jobs of several processes
def test_resharding_4_to_2_to_1_gives_the_same_loss_on_a_fixed_batch(ranks: Ranks, tmp_path: Path) -> None:
    folder, log = tmp_path / "ckpt", tmp_path / "log"
    ranks.run("reshard", 4, folder=folder, log=log, train_to=3)  # trains, saves step 3
    ranks.run("reshard", 2, folder=folder, log=log)  # loads 4 ranks' step 3, saves it as step 4
    ranks.run("reshard", 1, folder=folder, log=log)  # one plain process loads 2 ranks' step 4
    losses = {(int(world), int(step)): (float(before), float(after))
              for _, world, step, before, after, _ in events(log, "loss")}
    assert len(events(log, "loss")) == 4 + 2 + 1 and set(losses) == {(4, 3), (2, 4), (1, 5)}
    (loss4, next4), (loss2, next2), (loss1, next1) = losses[(4, 3)], losses[(2, 4)], losses[(1, 5)]
    assert abs(loss2 - loss4) <= 1e-6 and abs(loss1 - loss4) <= 1e-6, losses
    assert abs(next2 - next4) <= 1e-6 and abs(next1 - next4) <= 1e-6, "the optimizer state did not reshard"
    assert [(e["step"], e["world_size"]) for e in manifest(folder)] == [(3, 4), (4, 2), (5, 1)]
    print(f"loss on the fixed batch: 4 ranks {loss4!r}, 2 ranks {loss2!r}, 1 process {loss1!r}")


@pytest.mark.slow  # jobs of several processes
def test_async_save_blocks_for_staging_only_and_commits_once_every_rank_has_written(
        ranks: Ranks, tmp_path: Path) -> None:
    folder, log = tmp_path / "ckpt", tmp_path / "log"
    ranks.run("probe_async", WORLD, folder=folder, log=log, steps=3)
    returned = events(log, "returned")
    # ranks 0-2 returned from save(N), and changed their state, before rank 3 had called save(N);
    # at that moment the manifest named only the steps before N
    assert sorted((int(rank), int(step)) for rank, step, *_ in returned) == [
        (rank, step) for rank in range(WORLD - 1) for step in (1, 2, 3)]
    for rank, step, named, _ in returned:
        assert int(step) not in json.loads(named), f"step {step} named before rank {WORLD - 1} saved it"
    committed = events(log, "committed")
    assert len(committed) == WORLD
    for rank, named, step, stamps, _ in committed:
        assert (json.loads(named), int(step)) == ([1, 2, 3], 3)
        assert json.loads(stamps) == [3.0], f"rank {rank}: the change made after staging leaked into the save"
    assert unverified(folder) == []


@pytest.mark.slow  # jobs of several processes
def test_a_step_with_per_rank_state_saved_by_4_ranks_needs_reshard_to_load_into_2(
        ranks: Ranks, tmp_path: Path) -> None:
    folder, log = tmp_path / "ckpt", tmp_path / "log"
    ranks.run("train", WORLD, folder=folder, log=log, job=1, until=2)
    ranks.run("resume_only", 2, folder=folder, log=log)
    expected = (f"{folder}/step-00000002: step 2 was saved by 4 ranks, each with its own rank_state (RNG "
                "states, data position), and this job has 2; per-rank state does not reshard: resume with 4 "
                "ranks, or pass reshard=True to load the sharded state alone (rank_state None on every rank)")
    errors = [line.split(" ", 2)[1:] for line in log.read_text().splitlines() if line.startswith("error ")]
    assert sorted((rank, json.loads(rest.rsplit(" ", 1)[0])) for rank, rest in errors) == [
        ("0", expected), ("1", expected)]
    ranks.run("resume_only", 2, folder=folder, log=log, reshard=True)
    ranks.run("resume_only", 1, folder=folder, log=log, reshard=True)
    ranks.run("resume_only", WORLD, folder=folder, log=log)
    resumed = [tuple(e[:3]) for e in events(log, "resumed")]
    assert sorted(resumed[:2]) == [("0", "2", "False"), ("1", "2", "False")] and resumed[2] == ("0", "2", "False")
    assert sorted(resumed[3:]) == [(str(rank), "2", "True") for rank in range(WORLD)]


# --- one process, no process group: the folder rules, without the cost of starting ranks ------

def _saved(folder: Path, steps: list[int], *, keep: int = 5) -> None:
    with DistributedCheckpointManager(folder, keep=keep) as manager:
        for step in steps:
            manager.save({"w": torch.full((4,), float(step))}, step, rank_state={"step": step})


def _loaded(folder: Path) -> tuple[int, float, Any] | None:
    state = {"w": torch.zeros(4)}
    resumed = DistributedCheckpointManager(folder).load_latest(state)
    return None if resumed is None else (resumed.step, float(state["w"][0]), resumed.rank_state)


def test_a_rollback_loads_the_newest_step_at_or_before_the_one_asked_that_verifies(tmp_path: Path) -> None:
    # the loss-spike guard's rollback_to: a step saved while the spike was on must not be loaded
    folder = tmp_path / "ckpt"
    _saved(folder, [10, 20, 30, 40])
    manager = DistributedCheckpointManager(folder)

    def loaded(at_most: int) -> tuple[int, float] | None:
        state = {"w": torch.zeros(4)}
        resumed = manager.load_latest(state, at_most=at_most)
        return None if resumed is None else (resumed.step, float(state["w"][0]))
    assert (loaded(35), loaded(40), loaded(10)) == ((30, 30.0), (40, 40.0), (10, 10.0))
    shard = next((folder / "step-00000020").glob("*.distcp"))
    shard.write_bytes(shard.read_bytes()[:-1])  # torn: the rollback falls back past it too
    assert (loaded(25), loaded(9)) == ((10, 10.0), None)


def test_keep_must_be_at_least_two(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as error:
        DistributedCheckpointManager(tmp_path, keep=1)
    assert str(error.value) == "keep must be at least 2 (the newest may be mid-save), got 1"


def test_a_folder_that_is_not_one_of_sharded_checkpoints_is_refused_with_what_was_expected(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    _saved(tmp_path / "ckpt", [1])
    single = tmp_path / "single"
    single.mkdir()
    (single / "manifest.json").write_text('{"checkpoints": []}')
    expected = {
        tmp_path / "file": f"{tmp_path}/file: not a folder; expected the folder that holds the step-NNNNNNNN folders",
        tmp_path / "ckpt" / "step-00000001": (
            f"{tmp_path}/ckpt/step-00000001: holds one DCP checkpoint (its .metadata file), not a folder of them; "
            f"expected the folder above it ({tmp_path}/ckpt) or a folder of its own"),
        single: (f"{single}: holds a single-process CheckpointManager's checkpoints (manifest.json, "
                 "ckpt-NNNNNNNN.pt); expected a folder of its own for sharded checkpoints (manifest.dcp.json)")}
    for folder, message in expected.items():
        with pytest.raises(ValueError) as error:
            DistributedCheckpointManager(folder)
        assert str(error.value) == message
    assert sorted(p.name for p in single.iterdir()) == ["manifest.json"]  # nothing touched


def test_a_second_writer_is_refused_and_a_reader_needs_no_lock(tmp_path: Path) -> None:
    with DistributedCheckpointManager(tmp_path, keep=2) as first:
        first.save({"w": torch.ones(4)}, 1)
        with pytest.raises(ValueError) as error:
            DistributedCheckpointManager(tmp_path).save({"w": torch.ones(4)}, 2)
        assert str(error.value) == (
            f"{tmp_path}: another writer (PID {os.getpid()}) holds {tmp_path}/.lock; one "
            "DistributedCheckpointManager saves per folder (to only read, call only load_latest)")
        assert _loaded(tmp_path) == (1, 1.0, None)


def test_leftovers_of_killed_saves_go_and_only_the_manifest_says_what_exists(tmp_path: Path) -> None:
    _saved(tmp_path, [1, 2])
    (tmp_path / ".step-00000003.tmp").mkdir()  # a save killed while writing
    (tmp_path / ".step-00000003.tmp" / "__0_0.distcp").write_bytes(b"half")
    (tmp_path / ".step-00000001.retired.tmp").mkdir()  # a rotation killed while deleting
    (tmp_path / ".manifest.dcp.json.k3j_x9.tmp").write_text('{"checkpo')
    os.rename(tmp_path / "step-00000002", tmp_path / "step-00000004")  # complete, renamed, never named
    (tmp_path / "notes.txt").write_text("not ours to delete")
    assert _loaded(tmp_path) == (1, 1.0, {"step": 1})  # step 2's folder is gone: the older one
    manager = DistributedCheckpointManager(tmp_path, keep=5)
    assert manager.cleanup() == [".manifest.dcp.json.k3j_x9.tmp", ".step-00000001.retired.tmp", ".step-00000003.tmp"]
    manager.save({"w": torch.full((4,), 4.0)}, 4, rank_state={"step": 4})  # replaces the unnamed folder
    manager.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".lock", "manifest.dcp.json", "notes.txt", "step-00000001", "step-00000004"]
    # step 2 stays named, its folder gone: it fails verification and is never loaded
    assert [e["step"] for e in manifest(tmp_path)] == [1, 2, 4]
    assert unverified(tmp_path) == ["step-00000002/.metadata", "step-00000002/__0_0.distcp"]
    assert _loaded(tmp_path) == (4, 4.0, {"step": 4})


def test_an_unreadable_manifest_is_set_aside_and_rebuilt_from_the_complete_steps(tmp_path: Path) -> None:
    _saved(tmp_path, [1, 2, 3])
    (tmp_path / "manifest.dcp.json").write_text('{"checkpoints": [{"step": "x"}]}')
    (tmp_path / "step-00000003" / "__0_0.distcp").write_bytes(b"")  # step 3 lost its shard's bytes
    assert _loaded(tmp_path) == (2, 2.0, {"step": 2})  # a reader rebuilds in memory, touches nothing
    assert (tmp_path / "manifest.dcp.json").read_text() == '{"checkpoints": [{"step": "x"}]}'
    manager = DistributedCheckpointManager(tmp_path, keep=5)
    with pytest.warns(UserWarning, match=r"manifest.dcp.json was unreadable: moved to manifest.dcp.json.unreadable-"):
        manager.cleanup()
    manager.close()
    assert [e["step"] for e in manifest(tmp_path)] == [1, 2] and unverified(tmp_path) == []
    assert len(list(tmp_path.glob("manifest.dcp.json.unreadable-*"))) == 1


def test_manifest_names_outside_the_folder_are_never_opened_or_deleted(tmp_path: Path) -> None:
    folder, outside = tmp_path / "ckpt", tmp_path / "outside"
    _saved(folder, [1, 2])
    outside.mkdir()
    (outside / ".metadata").write_text("precious")
    entries = manifest(folder)
    hostile = [dict(entries[1], step=3, folder="../outside"),
               dict(entries[1], step=4, folder="step-00000004",
                    shards=[dict(s, step=4, file="../../outside/.metadata") for s in entries[1]["shards"]])]
    (folder / "manifest.dcp.json").write_text(json.dumps({"checkpoints": entries + hostile}))
    with DistributedCheckpointManager(folder, keep=2) as manager:
        assert [e.step for e in manager.entries] == [1, 2]
        manager.save({"w": torch.full((4,), 5.0)}, 5)  # rotates out what the manifest names: step 1 only
    assert (outside / ".metadata").read_text() == "precious"
    assert [e["step"] for e in manifest(folder)] == [2, 5]


def test_a_state_that_does_not_fit_the_step_is_a_clear_error(tmp_path: Path) -> None:
    _saved(tmp_path, [1])
    with pytest.raises(ValueError) as error:
        DistributedCheckpointManager(tmp_path).load_latest({"w": torch.zeros(5)})
    assert str(error.value) == (
        f"{tmp_path}/step-00000001: step 1 verifies but does not load into the state given (rank 0: ValueError: "
        "Size mismatch between saved torch.Size([4]) and current: torch.Size([5]) for w)")
    with pytest.raises(ValueError) as error:
        DistributedCheckpointManager(tmp_path).save({"rank_state-0": torch.zeros(1)}, 2)
    assert str(error.value) == "state keys ['rank_state-0'] start with 'rank_state-', which is reserved for rank_state"
    with pytest.raises(ValueError) as error:
        DistributedCheckpointManager(tmp_path).save({"w": torch.zeros(1)}, -1)
    assert str(error.value) == "step must be a non-negative int, got -1"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs: a real full disk, DCP's own writer included."""
    with tmpfs(tmp_path / "disk", "2m") as mount:
        yield mount


@pytest.mark.parametrize("async_save", [False, True], ids=["sync", "async"])
def test_a_full_disk_fails_the_save_cleanly_and_smaller_saves_still_fit(small_disk: Path, async_save: bool) -> None:
    folder = small_disk / "ckpt"
    manager = DistributedCheckpointManager(folder, keep=2, async_save=async_save)
    manager.save({"w": torch.ones(64 * 1024)}, 1)  # 256 KiB
    with pytest.raises(CheckpointSaveError) as error:
        # 4 MiB on a 2 MiB disk, in bytes the pre-save estimate (tensors, the last step) cannot see:
        # past the room check (tests/test_storage_guard.py), DCP's own writer meets the full disk
        manager.save({"w": torch.ones(64 * 1024), "blob": bytes(4 * 2**20)}, 2)
        manager.wait()  # async: the error comes with the commit
    message = str(error.value)  # a tensor's full disk torch words "unexpected pos": the free space says it
    assert re.fullmatch(rf"{re.escape(str(folder))}: step 2 was not committed \(rank 0: (RuntimeError|OSError): .+\); "
                        r"(0\.\d\d) MiB free there; its temporary folder was removed", message), message
    assert not list(folder.glob(".*.tmp"))
    manager.save({"w": torch.full((64 * 1024,), 3.0)}, 3)
    manager.close()
    assert [e["step"] for e in manifest(folder)] == [1, 3] and unverified(folder) == []


@pytest.mark.slow  # a job of 4 processes
def test_a_step_without_room_is_refused_on_every_rank_before_a_byte_lands(ranks: Ranks, tmp_path: Path) -> None:
    with tmpfs(tmp_path / "disk", "4m") as disk:
        folder, log = disk / "ckpt", tmp_path / "refuse.log"
        ranks.run("refuse", WORLD, folder=folder, log=log, ballast=disk / "ballast", leave=8 * 1024)
        refused = [line.split(" ", 3)[1:] for line in log.read_text().splitlines()]
        assert sorted(rank for rank, _, _ in refused) == [str(r) for r in range(WORLD)], refused
        assert {(code, message.rsplit(" ", 1)[0]) for _, code, message in refused} == {(
            "28", next(m for _, _, m in refused).rsplit(" ", 1)[0])}  # one message, errno ENOSPC, on every rank
        message = refused[0][2].rsplit(" ", 1)[0]
        assert message.startswith(f"{folder}: step 2 not saved, refused before writing a byte: no space left on "
                                  f"device on the tmpfs file system at {disk}: "), message
        assert "(the last step's files, " in message
        assert sorted(p.name for p in folder.iterdir()) == [".lock", "manifest.dcp.json", "step-00000001"]
        assert [e["step"] for e in manifest(folder)] == [1] and unverified(folder) == []
