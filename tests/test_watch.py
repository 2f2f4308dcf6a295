"""`tooling watch LOG...`: logs followed like `tail -F`, failures filed as they happen, a recurrence
as an occurrence of its open incident, a stall as a hang; rotation loses no line, a restart reads
no line twice."""
from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from support import PROJECT, snapshot, tooling
from tooling.main import main
from tooling.records.load import load_file
from tooling.watch import watcher as poll_loop
from tooling.watch.progress import last_progress

NOW = "2026-11-29T12:00:00+00:00"
LAB3 = PROJECT / "labs" / "03-nan-guard" / "train.py"


def at(minutes: int) -> str:
    """NOW plus ``minutes``."""
    return f"2026-11-29T{12 + minutes // 60:02d}:{minutes % 60:02d}:00+00:00"


def xid(k: int) -> str:
    """The NVRM line of a GPU falling off the bus, as dmesg prints it: the k-th time, 2 minutes
    (of uptime) after the one before."""
    return (f"[{812345.678934 + 120 * k:.6f}] NVRM: Xid (PCI:0000:ca:00): 79, pid=4242, name=python3, "
            "GPU has fallen off the bus.\n")


def append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)


def watch(repo: Path, state: Path, *args: str, now: str = NOW, log: str = "train.log") -> list[dict[str, Any]]:
    """`tooling watch --once --json` in ``repo`` (in this process: a second where a new one takes
    one): what it created or updated."""
    out, err, here = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(repo)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["--now", now, "watch", log, "--run", "demo-7b", "--once", "--json", "--state", str(state),
                         *args])
    finally:
        os.chdir(here)
    assert (code, err.getvalue()) == (0, ""), err.getvalue()
    return [json.loads(line) for line in out.getvalue().splitlines()]


def incident(repo: Path, incident_id: str) -> dict[str, Any]:
    return load_file(str(repo / "incidents" / f"{incident_id}.yaml")).data


def summary(events: list[dict[str, Any]]) -> list[tuple[str, str, str, int, int]]:
    return [(e["action"], e["incident"], e["failure_mode"], e["added"], e["occurrences"]) for e in events]


def lines_read(state: Path, log: Path) -> int:
    return json.loads(state.read_text())["logs"][str(log)]["lines"]


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


@pytest.fixture
def lab(repo: Path, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Lab 3's trainer (the NaN guard), its output going to repo/train.log; killed afterwards."""
    with open(repo / "train.log", "ab") as out, open(tmp_path / "lab.err", "wb") as err:
        process = subprocess.Popen([sys.executable, str(LAB3), "--out", str(tmp_path / "lab"), "--steps", "1000000",
                                    "--log-every", "10"], stdout=out, stderr=err, cwd=PROJECT,
                                   env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        yield process
    finally:
        process.send_signal(signal.SIGCONT)
        process.kill()
        process.wait()


def _after_the_nan(log: Path) -> bool:
    text = log.read_text(encoding="utf-8")
    return "rolled back to step" in text and "| loss" in text.split("rolled back to step", 1)[1]


@pytest.mark.slow
def test_a_running_lab_gives_a_nan_a_hang_and_an_xid_with_eleven_occurrences(
        repo: Path, tmp_path: Path, lab: subprocess.Popen[bytes]) -> None:
    log, old, state = repo / "train.log", repo / "train.log.1", tmp_path / "offsets.json"
    wait_for(lambda: _after_the_nan(log), "lab 3 to hit its NaN and train on")
    lab.send_signal(signal.SIGSTOP)  # alive and making no progress: hung
    [nan] = watch(repo, state)
    assert summary([nan]) == [("created", "INC-0003", "training.nan", 1, 1)]
    assert nan["signatures"][0].startswith("step 48: non-finite loss or grad norm; rolled back to step 40")
    assert watch(repo, state, now=at(29)) == []  # not yet: 30 minutes is the default
    [hang] = watch(repo, state, now=at(31))
    assert summary([hang]) == [("created", "INC-0004", "training.hang", 1, 1)]
    assert (hang["started_at"], hang["detected_at"], hang["last_progress"]["log"]) == (NOW, at(31), "train.log")
    assert watch(repo, state, now=at(45)) == []  # one hang per stall, not one per poll

    append(log, xid(0))
    [first] = watch(repo, state, now=at(46))
    assert summary([first]) == [("created", "INC-0005", "gpu.fell-off-bus", 1, 1)]
    append(log, "".join(xid(k) for k in range(1, 5)))
    log.rename(old)  # logrotate mid-run: the lab still writes into the renamed file
    trained = old.read_text().count("| loss")
    lab.send_signal(signal.SIGCONT)
    wait_for(lambda: old.read_text().count("| loss") > trained + 1, "the lab to train on after the rotation")
    lab.send_signal(signal.SIGSTOP)
    append(log, "".join(xid(k) for k in range(5, 11)))  # the new file
    events = watch(repo, state, now=at(50))
    # the lab trained on meanwhile, with its learning rate lowered: it may reach another NaN, which is
    # then an occurrence of the NaN incident still open, or blow up to a finite loss thousands of times
    # its usual (step 150: loss 2094430), a divergence drafted from the loss's course
    # (tooling.logs.course) with the lab's own line as its signature; and nothing else
    xids = [e for e in events if e["failure_mode"] == "gpu.fell-off-bus"]
    others = [e for e in events if e not in xids]
    assert {(e["action"], e["failure_mode"]) for e in others} <= {
        ("occurrence", "training.nan"), ("created", "training.divergence")}
    assert all(e["incident"] == "INC-0003" for e in others if e["failure_mode"] == "training.nan")
    for diverged in (e for e in others if e["failure_mode"] == "training.divergence"):
        [line] = incident(repo, diverged["incident"])["signatures"]
        assert line.startswith("step ") and "| loss " in line and line in old.read_text()
    assert [(e["action"], e["incident"]) for e in xids] == [("occurrence", "INC-0005")] * len(xids)
    assert sum(e["added"] for e in xids) == 10 and xids[-1]["occurrences"] == 11
    assert incident(repo, "INC-0005")["occurrences"] == 11
    assert lines_read(state, log) == len(old.read_text().splitlines()) + len(log.read_text().splitlines())

    [again] = watch(repo, state, now=at(81))  # the lab trained after the rotation: a new stall
    assert summary([again]) == [("occurrence", "INC-0004", "training.hang", 1, 2)]
    assert sorted(p.stem for p in (repo / "incidents").glob("INC-*.yaml")) == [
        "INC-0001", "INC-0002", "INC-0003", "INC-0004", "INC-0005",
        *(e["incident"] for e in others if e["action"] == "created")]
    result = tooling("--now", at(81), "validate", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr


# Writes LOG as a training job would, with logrotate at work: progress lines and an Xid line (each
# written in two parts, the line break last) every 40 lines; a rename rotation (the job writes a
# few more lines into the renamed file before it opens the new one), then a copytruncate
# rotation (the writer paused meanwhile, as logrotate's copytruncate needs), then two stalls of
# STALL seconds with progress between. Prints how many lines and Xid lines it wrote.
WRITER = textwrap.dedent("""
    import json, os, shutil, sys, time
    log, stall = sys.argv[1], float(sys.argv[2])
    counts = {"lines": 0, "xids": 0}
    out = open(log, "ab", buffering=0)
    def put(text):
        out.write(text.encode())
    def progress(n):
        for _ in range(n):
            put(f"step {counts['lines']} | loss {2 + counts['lines'] % 7 / 10:.4f}\\n")
            counts["lines"] += 1
            time.sleep(0.002)
    def failure():
        k = counts["xids"]
        line = (f"[{812345.678934 + 120 * k:.6f}] NVRM: Xid (PCI:0000:ca:00): 79, pid=4242, name=python3, "
                "GPU has fallen off the bus.\\n")
        put(line[:30])
        time.sleep(0.3)
        put(line[30:])
        counts["lines"] += 1
        counts["xids"] += 1
    def phase():
        for _ in range(3):
            progress(40)
            failure()
    phase()
    os.rename(log, log + ".1")
    progress(5)
    failure()
    out.close()
    out = open(log, "ab", buffering=0)
    phase()
    time.sleep(0.3)
    shutil.copyfile(log, log + "-2")
    os.truncate(log, 0)
    phase()
    time.sleep(stall)
    progress(20)
    time.sleep(stall)
    print(json.dumps(counts))
""")


def events_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


@pytest.mark.slow
def test_following_a_log_another_process_writes_loses_no_line_across_rotations(repo: Path, tmp_path: Path) -> None:
    log, state, out, err = repo / "train.log", tmp_path / "offsets.json", tmp_path / "out", tmp_path / "err"
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        watcher = subprocess.Popen([sys.executable, "-m", "tooling", "watch", "train.log", "--run", "demo-7b",
                                    "--json", "--interval", "0.1", "--stall-after", "0.05", "--state", str(state)],
                                   cwd=repo, stdout=stdout, stderr=stderr)
    try:
        wait_for(lambda: "waiting for it to appear" in err.read_text(), "the watch to start")
        writer = subprocess.run([sys.executable, "-c", WRITER, str(log), "6"], capture_output=True, text=True,
                                timeout=120, check=True)
        written = json.loads(writer.stdout)
        assert written == {"lines": 3 * 3 * 41 + 6 + 20, "xids": 10}
        wait_for(lambda: state.exists() and lines_read(state, log) == written["lines"], "the watch to catch up", 30)
        wait_for(lambda: [e["occurrences"] for e in events_of(out) if e["failure_mode"] == "training.hang"] == [1, 2],
                 "the second stall", 30)
        watcher.send_signal(signal.SIGTERM)
        assert watcher.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        watcher.kill()
        watcher.wait()
    events = events_of(out)
    xids = [e for e in events if e["failure_mode"] == "gpu.fell-off-bus"]
    assert [e["action"] for e in xids] == ["created"] + ["occurrence"] * (len(xids) - 1)
    assert sum(e["added"] for e in xids) == 10 == xids[-1]["occurrences"] == incident(repo, xids[0]["incident"])["occurrences"]
    assert {e["failure_mode"] for e in events} == {"gpu.fell-off-bus", "training.hang"}
    assert err.read_text().splitlines() == [
        "tooling watch: following 1 log for demo-7b; a hang after 0.05 minutes without progress (--stall-after); "
        f"offsets in {state}",
        "tooling watch: train.log: not there yet; waiting for it to appear",
        f"tooling watch: stopped; offsets saved in {state}"]
    # a restart reads on from the offsets: no line twice, no incident twice
    before = snapshot(repo)
    assert watch(repo, state, "--stall-after", "0.05") == []
    assert lines_read(state, log) == written["lines"] and snapshot(repo) == before


def progress_lines(first: int, count: int) -> str:
    return "".join(f"step {n} | loss 2.{n % 10}\n" for n in range(first, first + count))


def test_copytruncate_between_two_polls_reads_the_rest_from_the_copy(repo: Path, tmp_path: Path) -> None:
    log, state = repo / "train.log", tmp_path / "offsets.json"
    log.write_text(progress_lines(0, 300) + xid(0))
    assert summary(watch(repo, state)) == [("created", "INC-0003", "gpu.fell-off-bus", 1, 1)]
    append(log, progress_lines(300, 200) + xid(1) + xid(2))  # not read yet when logrotate comes:
    shutil.copyfile(log, repo / "train.log.1")
    os.truncate(log, 0)
    log.write_text(progress_lines(500, 100) + xid(3))
    events = watch(repo, state, now=at(1))
    assert summary(events) == [("occurrence", "INC-0003", "gpu.fell-off-bus", 3, 4)]
    assert events[0]["logs"] == [{"log": "train.log", "first_line": 502, "last_line": 101, "count": 3}]
    assert lines_read(state, log) == 604


def test_a_renamed_log_is_read_to_its_end_before_the_new_one(repo: Path, tmp_path: Path) -> None:
    log, old, state = repo / "train.log", repo / "train.log.1", tmp_path / "offsets.json"
    log.write_text(progress_lines(0, 10))
    assert watch(repo, state) == []
    append(log, xid(0) + "step 10 | loss 2.0")  # its writer is not done with the renamed file:
    log.rename(old)
    future = time.time() + 600  # (it is not quiet for SETTLE seconds however slow this machine is)
    os.utime(old, (future, future))
    assert summary(watch(repo, state, now=at(1))) == [("created", "INC-0003", "gpu.fell-off-bus", 1, 1)]
    append(old, "\n" + xid(1))  # the partial line completed, one more line, and the writer moves on
    os.utime(old, (future, future))
    log.write_text(xid(2) + progress_lines(11, 5))
    events = watch(repo, state, now=at(2))
    assert summary(events) == [("occurrence", "INC-0003", "gpu.fell-off-bus", 2, 3)]
    assert events[0]["logs"] == [{"log": "train.log", "first_line": 13, "last_line": 1, "count": 2}]
    assert lines_read(state, log) == 19
    saved = json.loads(state.read_text())["logs"][str(log)]["files"]
    assert [(f["inode"], f["offset"]) for f in saved] == [(old.stat().st_ino, old.stat().st_size),
                                                          (log.stat().st_ino, log.stat().st_size)]


def test_a_partial_last_line_waits_for_its_line_break(repo: Path, tmp_path: Path) -> None:
    log, state = repo / "train.log", tmp_path / "offsets.json"
    log.write_text(progress_lines(0, 3) + xid(0).rstrip("\n"))
    assert watch(repo, state) == [] and lines_read(state, log) == 3
    append(log, "\n")
    assert summary(watch(repo, state)) == [("created", "INC-0003", "gpu.fell-off-bus", 1, 1)]
    assert lines_read(state, log) == 4


# A logger's ERROR line no mode names (other.unclassified): a failure only if the run did not go on
# after it, so it waits for the lines below it (tooling.logs.unknown)
UNNAMED = "ERROR 08-15 17:38:13 [async_llm.py:416] AsyncLLM output_handler failed.\n"


def test_a_line_that_waits_at_the_start_of_a_poll_is_counted_once(repo: Path, tmp_path: Path) -> None:
    """A poll whose first line waits for the next one reads nothing: it counted a line all the same
    (the scanner took the last byte of its buffer, not of what it read, for a partial line's)."""
    log, state = repo / "train.log", tmp_path / "offsets.json"
    future = time.time() + 600  # the writer is not done (not quiet for SETTLE seconds, however slow this machine is)
    log.write_text(progress_lines(0, 3))
    os.utime(log, (future, future))
    assert watch(repo, state) == [] and lines_read(state, log) == 3
    append(log, UNNAMED)
    os.utime(log, (future, future))
    assert watch(repo, state) == [] and lines_read(state, log) == 3  # it waits, and is not counted yet
    append(log, progress_lines(3, 1))  # the run went on: no failure
    os.utime(log, (future, future))
    assert watch(repo, state) == [] and lines_read(state, log) == 5


@pytest.mark.parametrize("how, notice", [
    ("in place", "tooling watch: train.log: emptied or rewritten after line 100, and no copy of it beside it; "
                 "reading it from its start"),
    ("by another file", "tooling watch: train.log: the file read up to line 100 is no longer there (removed or "
                        "compressed); lines written to it after that were not read"),
])
def test_a_rewritten_or_replaced_log_is_told_by_its_first_bytes(repo: Path, tmp_path: Path, how: str,
                                                                 notice: str) -> None:
    log, state = repo / "train.log", tmp_path / "offsets.json"
    log.write_text(progress_lines(0, 100))
    assert watch(repo, state) == []
    text = "another job\n" + progress_lines(0, 200) + xid(0)  # longer than what was read: only its start tells
    if how == "in place":
        log.write_text(text)  # the same inode
    else:
        (repo / "new.log").write_text(text)
        os.replace(repo / "new.log", log)
    result = tooling("--now", at(1), "watch", "train.log", "--run", "demo-7b", "--once", "--state", str(state),
                     cwd=repo)
    assert (result.returncode, result.stdout, result.stderr) == (
        0, "created incidents/INC-0003.yaml: GPU fell off the bus (Xid 79)\n", notice + "\n")
    assert lines_read(state, log) == 100 + 202


def test_one_hang_per_stall_and_a_new_stall_is_an_occurrence(repo: Path, tmp_path: Path) -> None:
    log, state = repo / "train.log", tmp_path / "offsets.json"
    log.write_text("nothing that is progress\n")
    assert watch(repo, state) == [] and watch(repo, state, now=at(90)) == []  # no progress ever: no hang
    append(log, progress_lines(0, 5))
    assert watch(repo, state, now=at(100)) == []
    [hang] = watch(repo, state, now=at(130))
    assert hang == {
        "action": "created", "incident": "INC-0003", "path": "incidents/INC-0003.yaml", "added": 1, "occurrences": 1,
        "title": "Training hung (cause not yet known): no progress for 30 minutes", "failure_mode": "training.hang",
        "layer": "unknown", "symptom": "hang", "detected_at": at(130), "started_at": at(100),
        "stall_after_minutes": 30,
        "last_progress": {"log": "train.log", "line": 6, "text": "step 4 | loss 2.4", "seen_at": at(100)}}
    data = incident(repo, "INC-0003")
    assert (data["status"], data["severity"], data["started_at"], data["detected_at"]) == (
        "open", "unknown", at(100), at(130))
    assert data["notes"].startswith(
        "Drafted by tooling watch: no progress line (a step report of the training loop) in train.log for 30 minutes "
        "(the default). The last one was line 6 of train.log, seen at 2026-11-29T13:40:00+00:00: 'step 4 | loss 2.4'.")
    assert watch(repo, state, now=at(150)) == [] and watch(repo, state, now=at(300)) == []
    append(log, progress_lines(5, 1))
    assert watch(repo, state, now=at(301)) == []
    assert summary(watch(repo, state, now=at(331))) == [("occurrence", "INC-0003", "training.hang", 1, 2)]
    assert tooling("--now", at(331), "validate", cwd=repo).returncode == 0


def test_the_run_record_sets_the_threshold_and_an_ended_run_never_hangs(repo: Path, tmp_path: Path) -> None:
    log, state = repo / "train.log", tmp_path / "offsets.json"
    assert tooling("--now", NOW, "set", "demo-7b", "feed.stall_after_minutes=5", cwd=repo).returncode == 0
    log.write_text(progress_lines(0, 5))
    assert watch(repo, state) == [] and watch(repo, state, now=at(4)) == []
    [hang] = watch(repo, state, now=at(5))
    assert (hang["title"], hang["stall_after_minutes"]) == ("Training hung (cause not yet known): no progress for "
                                                            "5 minutes", 5)
    assert "for 5 minutes (feed.stall_after_minutes of run demo-7b)." in incident(repo, "INC-0003")["notes"]
    assert watch(repo, state, "--stall-after", "2", now=at(6)) == []  # raised already: not again
    append(log, progress_lines(5, 1))
    assert tooling("--now", NOW, "set", "demo-7b", "state=finished", cwd=repo).returncode == 0
    assert watch(repo, state, now=at(7)) == [] and watch(repo, state, now=at(60)) == []


def test_last_progress_finds_the_last_step_line_far_back_or_none() -> None:
    filler = b"node001:48213:48303 [1] NCCL INFO Channel 01/32 : 1[1] -> 2[2] via P2P/IPC/read\n"
    buffer = bytearray(b"step 7 | loss 2.1\n" + filler * 20_000 + b"step 8 | loss 2.0\n" + filler * 30_000)
    assert last_progress(buffer, len(buffer)) == 18 + len(filler) * 20_000
    assert last_progress(buffer, 18 + len(filler) * 20_000) == 0
    assert last_progress(bytearray(filler * 10_000), len(filler) * 10_000) is None


EXPECTED = "expected a text log (dmesg, NCCL, SLURM output, tracebacks), gzipped or not"
BAD_INPUTS = [
    ("missing log", ["gone.log", "--once"], 1,
     "tooling: error: gone.log: no such file; expected a log that exists (without --once, tooling watch waits for a "
     "log to appear)"),
    ("missing folder", ["nowhere/train.log"], 1,
     "tooling: error: nowhere/train.log: no such folder nowhere; expected a log in a folder that exists (tooling "
     "watch waits for a log to appear, not for its folder)"),
    ("a folder", ["incidents", "--once"], 1, "tooling: error: incidents: is a directory; expected a log file"),
    ("binary", ["binary.log", "--once"], 1,
     f"tooling: error: binary.log: binary data (a NUL byte at offset 4), not a log; {EXPECTED}"),
    ("a pipe", ["pipe.log"], 1, "tooling: error: pipe.log: not a regular file; expected a log file"),
    ("gzip", ["old.log.gz", "--once"], 1,
     "tooling: error: old.log.gz: gzip-compressed; expected a plain text log that grows (read a compressed log "
     "with tooling scan)"),
    ("standard input", ["-", "--once"], 2,
     "tooling: error: -: standard input cannot be followed; expected log files (read a stream with tooling scan -)"),
    ("unknown run", ["train.log", "--once", "--run", "demo-99b"], 2,
     "tooling: error: --run: Expected one of: ['demo-7b'] but received: 'demo-99b'"),
    ("bad cluster", ["train.log", "--once", "--cluster", "RSC 1"], 2,
     "tooling: error: --cluster: expected lower-case letters, digits and dashes, such as rsc-1, but received "
     "'RSC 1'"),
    ("broken offsets", ["train.log", "--once"], 1,
     "tooling: error: {state}:2:2: [watch-offsets] not an offset file of tooling watch (Extra data); expected the JSON tooling watch writes (remove the file to read the logs from "
     "their start)"),
    ("offsets of another run", ["train.log", "--once", "--cluster", "rsc-1"], 1,
     "tooling: error: {state}: the offsets of a watch for demo-7b; expected those of a watch for cluster rsc-1 "
     "(give this one its own --state FILE)"),
]


def _bad_setup(repo: Path, state: Path, case: str) -> None:
    (repo / "train.log").write_text(progress_lines(0, 3))
    (repo / "binary.log").write_bytes(b"step\x00\x01\x02")
    (repo / "old.log.gz").write_bytes(b"\x1f\x8b\x08\x00")
    os.mkfifo(repo / "pipe.log")
    if case == "broken offsets":
        state.write_text("{\n}oops\n")
    if case == "offsets of another run":
        assert watch(repo, state) == []


@pytest.mark.parametrize("case, args, code, message", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_is_a_one_line_error_and_writes_nothing(repo: Path, tmp_path: Path, case: str, args: list[str],
                                                          code: int, message: str) -> None:
    (tmp_path / "offsets").mkdir()
    state = tmp_path / "offsets" / "offsets.json"  # alone in its folder: a lock file made there would show
    _bad_setup(repo, state, case)
    before, offsets = snapshot(repo), snapshot(tmp_path / "offsets")
    place = [] if {"--run", "--cluster"} & set(args) else ["--run", "demo-7b"]
    result = tooling("watch", *args, *place, "--state", str(state), cwd=repo, timeout=30)
    assert (result.returncode, result.stdout, result.stderr) == (code, "", message.format(state=state) + "\n")
    assert snapshot(repo) == before and snapshot(tmp_path / "offsets") == offsets


OFFSETS_EXPECTED = "expected the JSON tooling watch writes (remove the file to read the logs from their start)"
BAD_OFFSETS = [  # each once crashed, hung, or read the log from a wrong place
    ("nested", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ("negative offset", {"offset": -5}, "unexpected content: logs.{log}.files.0.offset is -5, expected a number >= 0"),
    ("fractional offset", {"offset": 10.5},
     "unexpected content: logs.{log}.files.0.offset is a fraction, expected a whole number"),
    ("null offset", {"offset": None}, "unexpected content: logs.{log}.files.0.offset is null, expected a whole number"),
    ("string flag", {"hang_raised": "no"}, "unexpected content: hang_raised is a string, expected true or false"),
    ("naive progress time", {"progress": {"at": "2026-11-29T12:00:00", "log": "train.log", "line": 1, "text": "x"}},
     "unexpected content: progress.at '2026-11-29T12:00:00' has no timezone offset"),
    ("logs as a list", {"logs": []}, "unexpected content: logs is a list, expected an object"),
    ("bad id", {"id": "12"}, "unexpected content: id '12', expected 16 hexadecimal digits, the first a letter"),
    ("journal without failures", {"pending": {"poll": 1}}, "unexpected content: pending.failures is missing"),
]


@pytest.mark.parametrize("case, change, message", BAD_OFFSETS, ids=[b[0] for b in BAD_OFFSETS])
def test_a_broken_offset_file_is_a_located_error(repo: Path, tmp_path: Path, case: str, change: Any,
                                                 message: str) -> None:
    log, state = repo / "train.log", tmp_path / "offsets.json"
    log.write_text(xid(0))
    assert summary(watch(repo, state)) == [("created", "INC-0003", "gpu.fell-off-bus", 1, 1)]
    if isinstance(change, str):
        state.write_text(change)
    else:
        data = json.loads(state.read_text())
        data.update({k: v for k, v in change.items() if k != "offset"})
        if "offset" in change:
            data["logs"][str(log)]["files"][0]["offset"] = change["offset"]
        state.write_text(json.dumps(data))
    append(log, xid(1))
    before = snapshot(repo)
    result = tooling("watch", "train.log", "--once", "--run", "demo-7b", "--state", str(state), cwd=repo, timeout=30)
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "", f"tooling: error: {state}:1:1: [watch-offsets] not an offset file of tooling watch "
               f"({message.format(log=log)}); {OFFSETS_EXPECTED}\n")
    assert snapshot(repo) == before


def test_an_offset_file_that_is_a_pipe_is_refused_not_waited_on(repo: Path, tmp_path: Path) -> None:
    (repo / "train.log").write_text(xid(0))
    os.mkfifo(tmp_path / "offsets.json")
    result = tooling("watch", "train.log", "--once", "--run", "demo-7b", "--state", str(tmp_path / "offsets.json"),
                     cwd=repo, timeout=30)
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "", f"tooling: error: {tmp_path / 'offsets.json'}: not a regular file; expected the offset file tooling "
               "watch writes\n")
    assert not (repo / "incidents" / "INC-0003.yaml").exists()


def test_an_unreadable_log_is_an_error(repo: Path) -> None:
    """As a user the log's mode shuts out (root reads anything: it runs the command as nobody)."""
    folder = Path(tempfile.mkdtemp())
    try:
        folder.chmod(0o755)
        shutil.copytree(repo, folder / "repo")
        (folder / "repo" / "train.log").write_text("step 1 | loss 2\n")
        (folder / "repo" / "train.log").chmod(0)
        user = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"] if os.geteuid() == 0 else []
        result = subprocess.run([*user, sys.executable, "-m", "tooling", "watch", "train.log", "--once", "--run",
                                 "demo-7b", "--state", str(folder / "offsets.json")], cwd=folder / "repo",
                                capture_output=True, text=True, timeout=60)
        assert (result.returncode, result.stdout, result.stderr) == (
            1, "", "tooling: error: train.log: permission denied; expected a log this user may read\n")
        assert not (folder / "offsets.json").exists()
    finally:
        shutil.rmtree(folder)


@pytest.mark.parametrize("args, message", [
    (["--stall-after", "0"], "argument --stall-after: expected minutes above 0 and at most 10080 (a week), such as "
                             "30 or 0.5, but received: '0'"),
    (["--stall-after", "soon"], "argument --stall-after: expected minutes above 0 and at most 10080 (a week), such "
                                "as 30 or 0.5, but received: 'soon'"),
    (["--interval", "-1"], "argument --interval: expected seconds between 0 and 3600 but received: '-1'"),
    ([], "one of the arguments --run --cluster is required"),
])
def test_bad_options_stop_at_the_command_line(repo: Path, args: list[str], message: str) -> None:
    (repo / "train.log").write_text("step 1 | loss 2\n")
    place = ["--run", "demo-7b"] if args else []
    result = tooling("watch", "train.log", "--once", *place, *args, cwd=repo)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines()[-1] == f"tooling: error: watch: {message}"


def test_one_watch_per_offset_file(repo: Path, tmp_path: Path) -> None:
    state = tmp_path / "offsets.json"
    (repo / "train.log").write_text("step 1 | loss 2\n")
    with subprocess.Popen([sys.executable, "-m", "tooling", "watch", "train.log", "--run", "demo-7b", "--state",
                           str(state)], cwd=repo, stderr=subprocess.PIPE, text=True) as first:
        try:
            assert first.stderr is not None and "following 1 log" in first.stderr.readline()
            result = tooling("watch", "train.log", "--once", "--run", "demo-7b", "--state", str(state), cwd=repo)
            assert (result.returncode, result.stderr) == (
                1, f"tooling: error: {state}: in use by another tooling watch (pid {first.pid}); expected one watch "
                   "per offset file (stop that one, or give this one its own --state FILE)\n")
        finally:
            first.send_signal(signal.SIGINT)
            assert first.wait(timeout=30) == 130


def test_an_occurrence_keeps_a_persons_edits_and_a_resolved_incident_gets_none(repo: Path, tmp_path: Path) -> None:
    log, state, path = repo / "train.log", tmp_path / "offsets.json", repo / "incidents" / "INC-0003.yaml"
    log.write_text(xid(0))
    assert summary(watch(repo, state)) == [("created", "INC-0003", "gpu.fell-off-bus", 1, 1)]
    path.write_text(path.read_text().replace("status: open", "status: investigating  # dana drains node042"))
    append(log, xid(1))
    assert summary(watch(repo, state, now=at(1))) == [("occurrence", "INC-0003", "gpu.fell-off-bus", 1, 2)]
    text = path.read_text()
    assert "status: investigating  # dana drains node042\n" in text and "\noccurrences: 2\n" in text
    result = tooling("--now", at(2), "set", "INC-0003", "status=resolved", f"resolved_at={at(2)}", cwd=repo)
    assert result.returncode == 0, result.stderr
    append(log, xid(2))
    assert summary(watch(repo, state, now=at(3))) == [("created", "INC-0004", "gpu.fell-off-bus", 1, 1)]
    assert load_file(str(path)).data["occurrences"] == 2


def test_a_state_file_in_a_folder_that_is_not_there_is_refused_not_made(repo: Path, tmp_path: Path) -> None:
    (repo / "train.log").write_text(progress_lines(0, 3))
    state = tmp_path / "no" / "such" / "offsets.json"
    result = tooling("watch", "train.log", "--once", "--run", "demo-7b", "--state", str(state), cwd=repo, timeout=30)
    assert (result.returncode, result.stderr) == (
        2, f"tooling: error: --state {state}: no folder {state.parent}; expected a file in a folder that exists\n")
    assert not (tmp_path / "no").exists()


def _killed_watch(repo: Path, state: Path, rng: random.Random, written: int, *, after_event: bool) -> int:
    """A watch started, the log growing by Xid lines (and step lines) while it runs, then a SIGKILL:
    at a random moment, or ``after_event`` right after it says it filed something (its incident
    written, its offsets not yet). How many Xid lines there are now."""
    watcher = subprocess.Popen([sys.executable, "-m", "tooling", "--now", NOW, "watch", "train.log", "--run", "demo-7b",
                                "--interval", "0.05", "--json", "--state", str(state)],
                               cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert watcher.stdout is not None and watcher.stderr is not None
    try:
        assert "following 1 log" in watcher.stderr.readline().decode()
        start = time.monotonic()
        end, events = start + (60 if after_event else rng.uniform(0.2, 2.0)), rng.randint(1, 3)
        if after_event:
            threading.Thread(target=_kill_after, args=(watcher, events), daemon=True).start()
        while time.monotonic() < end and watcher.poll() is None:
            for _ in range(rng.randint(1, 20)):
                append(repo / "train.log", xid(written) + f"step {written} | loss 2.0\n")
                written += 1
            time.sleep(rng.uniform(0, 0.05))
    finally:
        watcher.kill()
        watcher.wait()
    assert watcher.stderr.read() == b""
    return written


def _kill_after(watcher: subprocess.Popen[bytes], events: int) -> None:
    """SIGKILL the watch as soon as it has said it filed something ``events`` times."""
    assert watcher.stdout is not None
    for _ in range(events):
        watcher.stdout.readline()
    watcher.kill()


@pytest.mark.slow
def test_a_watch_killed_at_random_moments_counts_every_line_exactly_once(repo: Path, tmp_path: Path) -> None:
    """SIGKILL lands anywhere, also between an incident's write and its offsets': the journal in the
    offset file and the poll's mark in the incident make the restarted watch file only the rest."""
    rng = random.Random(20261129)
    log, state = repo / "train.log", tmp_path / "offsets.json"
    log.write_text("")
    corpus = set((repo / "incidents").glob("INC-*.yaml"))  # (one of them an Xid 79 too, resolved)
    written, journals = 0, 0
    for kill in range(12):
        written = _killed_watch(repo, state, rng, written, after_event=kill % 2 == 1)
        journals += state.exists() and json.loads(state.read_text())["pending"] is not None
    watch(repo, state)
    filed = [incident(repo, path.stem) for path in set((repo / "incidents").glob("INC-*.yaml")) - corpus]
    assert {i["failure_mode"] for i in filed} == {"gpu.fell-off-bus"}
    assert sum(i.get("occurrences", 1) for i in filed) == written
    assert lines_read(state, log) == 2 * written
    assert journals > 0, "no kill landed while a poll was filing: the test proved nothing"
    result = tooling("--now", NOW, "validate", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_offset_file_of_an_older_version_loads_and_gets_an_id(repo: Path, tmp_path: Path) -> None:
    log, state = repo / "train.log", tmp_path / "offsets.json"
    log.write_text(xid(0))
    assert summary(watch(repo, state)) == [("created", "INC-0003", "gpu.fell-off-bus", 1, 1)]
    first = json.loads(state.read_text())["id"]
    old = {k: v for k, v in json.loads(state.read_text()).items() if k not in ("id", "polls", "pending")}
    state.write_text(json.dumps(old))  # as the version before the journal wrote it
    append(log, xid(1))
    assert summary(watch(repo, state, now=at(1))) == [("occurrence", "INC-0003", "gpu.fell-off-bus", 1, 2)]
    saved = json.loads(state.read_text())
    assert re.fullmatch("[a-f][0-9a-f]{15}", saved["id"]) and (saved["polls"], saved["pending"]) == (1, None)
    assert saved["id"] != first and incident(repo, "INC-0003")["watch_polls"] == {first: "1-0", saved["id"]: "1-0"}
    assert lines_read(state, log) == 2


class _Killed(BaseException):
    """A SIGKILL, where the test says."""


def test_a_poll_killed_after_its_incident_was_written_does_not_count_it_again(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log, state, path = repo / "train.log", tmp_path / "offsets.json", repo / "incidents" / "INC-0003.yaml"
    log.write_text(xid(0))
    assert summary(watch(repo, state)) == [("created", "INC-0003", "gpu.fell-off-bus", 1, 1)]
    path.write_text(path.read_text().replace("status: open", "status: open  # dana looks at node042"))
    append(log, xid(1) + xid(2))

    def killed_once_filed(at: Path, data: Any) -> None:
        if data.pending is None:  # the incident is written, the journal not cleared yet
            raise _Killed()
        save(at, data)
    save = poll_loop.save
    monkeypatch.setattr(poll_loop, "save", killed_once_filed)
    with pytest.raises(_Killed):
        watch(repo, state, now=at(1))
    monkeypatch.undo()
    journal = json.loads(state.read_text())
    assert (journal["pending"]["poll"], len(journal["pending"]["failures"]), lines_read(state, log)) == (2, 1, 3)
    assert incident(repo, "INC-0003")["occurrences"] == 3
    assert watch(repo, state, now=at(2)) == []  # the journal's failure has its mark: filed already
    assert incident(repo, "INC-0003")["occurrences"] == 3
    assert "status: open  # dana looks at node042\n" in path.read_text()
    assert json.loads(state.read_text())["pending"] is None
    append(log, xid(3))
    assert summary(watch(repo, state, now=at(3))) == [("occurrence", "INC-0003", "gpu.fell-off-bus", 1, 4)]
    assert tooling("--now", at(3), "validate", cwd=repo).returncode == 0


# Issue 21, defect 3: a launcher writes the same banner at the start of every file it writes
BANNER = "".join(f"launcher: rank {n} of 64 ready on node{n:03d} (NCCL 2.19.3, CUDA 12.3, driver 535.104.05)\n"
                 for n in range(20))


@pytest.mark.parametrize("read", ["past the banner", "only the banner"])
def test_copytruncate_regrown_past_the_offset_under_the_same_banner_loses_nothing(repo: Path, tmp_path: Path,
                                                                                    read: str) -> None:
    """Emptied and written again, with the same first KiB, past where the watch had read before
    its next poll: the old file's rest is read from the copy and the new file from its start
    (the watch used to read on at the old offset, in the new file, and file nothing)."""
    assert len(BANNER) > 1024
    log, state = repo / "train.log", tmp_path / "offsets.json"
    log.write_text(BANNER + (progress_lines(0, 60) if read == "past the banner" else ""))
    assert tooling("--now", NOW, "watch", "train.log", "--run", "demo-7b", "--once", "--state", str(state),
                   cwd=repo).returncode == 0
    append(log, xid(0))  # not read yet when logrotate copies the log and empties it:
    shutil.copyfile(log, repo / "train.log.1")
    os.truncate(log, 0)
    log.write_text(BANNER + progress_lines(0, 5) + xid(1) + progress_lines(5, 200))  # longer than what was read
    assert log.stat().st_size > (repo / "train.log.1").stat().st_size
    result = tooling("--now", at(1), "watch", "train.log", "--run", "demo-7b", "--once", "--state", str(state),
                     cwd=repo)
    assert (result.returncode, result.stdout, result.stderr) == (
        0, "created incidents/INC-0003.yaml: GPU fell off the bus (Xid 79) (2 occurrences)\n", "")
    assert lines_read(state, log) == len((repo / "train.log.1").read_text().splitlines()) + len(log.read_text().splitlines())
    scanned = tooling("scan", "train.log", "--json", cwd=repo)
    assert [d["failure_mode"] for d in json.loads(scanned.stdout)] == ["gpu.fell-off-bus"]


def process_xid(k: int) -> str:
    """Xid 79 as the k-th of the processes on the GPU reports it, 20 seconds after the one before."""
    return (f"[{812345.678934 + 20 * k:.6f}] NVRM: Xid (PCI:0000:ca:00): 79, pid={4242 + k}, name=python3, "
            "GPU has fallen off the bus.\n")


def _once(repo: Path, state: Path) -> list[dict[str, Any]]:
    result = tooling("--now", NOW, "watch", "train.log", "--run", "demo-7b", "--once", "--json", "--state", str(state),
                     cwd=repo)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_occurrences_are_the_logs_not_the_polls(repo: Path, tmp_path: Path) -> None:
    """Issue 21, defect 4: 13 Xid 79 lines from 13 processes, 20 s apart, are one occurrence (lines
    of a failure within a minute of the one before, by the log's clock: what scan drafts), read in
    one poll, or one line per poll of a watch that runs on, or in a watch started again between."""
    lines = [process_xid(k) for k in range(13)]
    other = tmp_path / "other"
    shutil.copytree(repo, other)
    (other / "train.log").write_text("".join(lines))  # one poll
    assert summary(_once(other, tmp_path / "one.json")) == [("created", "INC-0003", "gpu.fell-off-bus", 1, 1)]

    log, state, out = repo / "train.log", tmp_path / "offsets.json", tmp_path / "out"
    log.write_text("")
    with open(out, "wb") as stdout:
        watcher = subprocess.Popen([sys.executable, "-m", "tooling", "--now", NOW, "watch", "train.log", "--run",
                                    "demo-7b", "--json", "--interval", "0.05", "--state", str(state)],
                                   cwd=repo, stdout=stdout, stderr=subprocess.PIPE)
    try:
        for number, line in enumerate(lines[:10], 1):  # a poll per line
            append(log, line)
            wait_for(lambda: state.exists() and lines_read(state, log) == number, f"line {number} to be read", 30)
        watcher.send_signal(signal.SIGTERM)
        assert watcher.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        watcher.kill()
        watcher.wait()
    assert summary(events_of(out)) == [("created", "INC-0003", "gpu.fell-off-bus", 1, 1)]
    for line in lines[10:]:  # a watch started again for each line: the log's failures are in its offsets
        append(log, line)
        assert _once(repo, state) == []
    assert incident(repo, "INC-0003").get("occurrences", 1) == 1
    append(log, process_xid(13 + 3))  # a minute after the last: the GPU fell off the bus again
    assert summary(_once(repo, state)) == [("occurrence", "INC-0003", "gpu.fell-off-bus", 1, 2)]
    scanned = tooling("--now", NOW, "scan", "train.log", "--write", "--cluster", "rsc-1", cwd=other)
    assert scanned.returncode == 0


@pytest.mark.parametrize("change, message", [
    ({"failures": [{"mode": "gpu.fell-off-bus", "codes": [], "signatures": [1], "forms": [], "moment": None}]},
     "logs.{log}.failures.0.signatures holds other than strings, expected a list of strings"),
    ({"failures": [{"mode": "gpu.fell-off-bus", "codes": [], "signatures": [], "forms": [], "moment": ["at"]}]},
     "logs.{log}.failures.0.moment is ['at'], expected [\"at\" or \"uptime\", seconds] or null"),
    ({"beside": [[2049]]}, "logs.{log}.beside is not a list of [device, inode], expected whole numbers >= 0"),
], ids=["signatures", "moment", "beside"])
def test_what_an_offset_file_remembers_of_a_log_is_checked(repo: Path, tmp_path: Path, change: dict[str, Any],
                                                           message: str) -> None:
    """The failures a log showed (issue 21, defect 4: a restarted watch goes on counting them) and
    the files beside it (defect 3: a new one may be a copytruncate copy) are in the offset file."""
    log, state = repo / "train.log", tmp_path / "offsets.json"
    log.write_text(xid(0))
    assert summary(watch(repo, state)) == [("created", "INC-0003", "gpu.fell-off-bus", 1, 1)]
    data = json.loads(state.read_text())
    data["logs"][str(log)].update(change)
    state.write_text(json.dumps(data))
    result = tooling("watch", "train.log", "--once", "--run", "demo-7b", "--state", str(state), cwd=repo, timeout=30)
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "", f"tooling: error: {state}:1:1: [watch-offsets] not an offset file of tooling watch (unexpected content: "
               f"{message.format(log=log)}); {OFFSETS_EXPECTED}\n")
