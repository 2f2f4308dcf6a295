"""Two `tooling watch` processes reading the same log, each with its own offset file (independent
readers): one failure is one incident, and each occurrence is counted once, whichever reads it
first. Deciding "the open incident of this failure" and writing it happen under one lock of the
incidents folder; an occurrence another watch counted already (by its moment in the log, or its
line) is not counted again."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from support import tooling
from test_watch import NOW, append, at, incident, summary, wait_for, watch, xid
from tooling.records.load import load_file
import tooling as tooling_package
from tooling.watch.counted import BOUNDS, Counted, advanced, covered

UPTIME = 812345.678934  # of xid(0); xid(k) is 120 s later each


def _new_xid_incidents(repo: Path, corpus: set[Path]) -> list[dict]:
    filed = [load_file(str(p)).data for p in sorted(set((repo / "incidents").glob("INC-*.yaml")) - corpus)]
    return [i for i in filed if i["failure_mode"] == "gpu.fell-off-bus"]


def _done(state: Path, k: int) -> bool:
    """Whether the watch of ``state`` has taken xid(k) and filed what it found (nothing pending)."""
    if not state.exists():
        return False
    data = json.loads(state.read_text())
    moments = [f["moment"] for log in data["logs"].values() for f in log["failures"]]
    return ["uptime", UPTIME + 120 * k] in moments and data["pending"] is None


def _start(repo: Path, state: Path, out: Path) -> subprocess.Popen[bytes]:
    with open(out, "wb") as stdout:
        return subprocess.Popen([sys.executable, "-m", "tooling", "--now", NOW, "watch", "train.log", "--run",
                                 "demo-7b", "--json", "--interval", "0.05", "--state", str(state)],
                                cwd=repo, stdout=stdout, stderr=subprocess.PIPE)


def test_two_watches_of_one_log_file_one_incident_and_count_each_occurrence_once(repo: Path, tmp_path: Path) -> None:
    """Both watches are polling when the failure is written: their first filings meet (each takes
    a quarter of a second to load the record checks), as in the hostile try that filed INC-0001
    and INC-0003 for one Xid with every line counted twice."""
    log = repo / "train.log"
    log.write_text("step 1 | loss 2.0\n")
    corpus = set((repo / "incidents").glob("INC-*.yaml"))
    states = [tmp_path / "a.json", tmp_path / "b.json"]
    watches = [_start(repo, state, tmp_path / f"{state.stem}.out") for state in states]
    try:
        for process in watches:
            assert process.stderr is not None and "following 1 log" in process.stderr.readline().decode()
        wait_for(lambda: all(s.exists() for s in states), "both watches to poll")
        append(log, xid(0) + xid(1) + xid(2))  # three occurrences (120 s apart), read by both
        wait_for(lambda: all(_done(s, 2) for s in states), "both watches to file the three")
        append(log, xid(3) + xid(4))
        wait_for(lambda: all(_done(s, 4) for s in states), "both watches to file the next two")
        for process in watches:
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=30) == 130
    finally:
        for process in watches:
            process.kill()
            process.wait()
    filed = _new_xid_incidents(repo, corpus)
    assert [(i["id"], i["occurrences"]) for i in filed] == [("INC-0003", 5)]
    assert len(filed[0]["watch_polls"]) >= 1
    result = tooling("--now", at(5), "validate", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_second_reader_counts_only_what_the_first_did_not(repo: Path, tmp_path: Path) -> None:
    """One after the other, deterministically: the second watch reads the whole log and adds only
    the occurrences past those the first counted; the first then adds only what is new to both."""
    log, first, second = repo / "train.log", tmp_path / "a.json", tmp_path / "b.json"
    log.write_text(xid(0) + xid(1) + xid(2))
    assert summary(watch(repo, first)) == [("created", "INC-0003", "gpu.fell-off-bus", 3, 3)]
    append(log, xid(3) + xid(4))
    assert summary(watch(repo, second, now=at(1))) == [("occurrence", "INC-0003", "gpu.fell-off-bus", 2, 5)]
    append(log, xid(5))
    assert summary(watch(repo, first, now=at(2))) == [("occurrence", "INC-0003", "gpu.fell-off-bus", 1, 6)]
    assert watch(repo, second, now=at(3)) == []  # xid(5) is counted: nothing to write
    assert incident(repo, "INC-0003")["occurrences"] == 6
    assert tooling("--now", at(3), "validate", cwd=repo).returncode == 0


def test_a_watch_waits_for_the_incidents_lock_and_a_killed_holder_frees_it(repo: Path, tmp_path: Path) -> None:
    """A writer SIGKILLed while it holds the incidents folder's lock blocks nobody: the kernel
    releases a flock with its holder."""
    (repo / "train.log").write_text(xid(0))
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(repo / "incidents")], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        waiting = subprocess.Popen([sys.executable, "-m", "tooling", "--now", NOW, "watch", "train.log", "--run",
                                    "demo-7b", "--once", "--state", str(tmp_path / "a.json")],
                                   cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(3)
        assert waiting.poll() is None and not (repo / "incidents" / "INC-0003.yaml").exists()
        holder.kill()
        out, err = waiting.communicate(timeout=60)
    finally:
        holder.kill()
        holder.wait()
    assert (waiting.returncode, err) == (0, b"")
    assert out.decode().startswith("created incidents/INC-0003.yaml: GPU fell off the bus (Xid 79)")


def test_what_another_watch_counted_is_told_by_where_each_occurrence_starts() -> None:
    """By kind of start (a time, seconds since boot, a line); the starts of more occurrences than
    are kept come before the first kept; a watch's own marks are not another's."""
    lines = Counted(300, tuple(("line", n) for n in range(45, 301)))  # lines 1 to 300, the latest 256 kept
    assert [lines.covered(m) for m in ([], [{"line": 100}], [{"line": 300}], [{"at": 1e12}])] == [0, 100, 300, 0]
    mixed = Counted(3, (("uptime", 5.0), ("at", 10.0), ("line", 7)))
    assert mixed.covered([{"at": 10.0}, {"uptime": 4.0, "line": 9}]) == 2
    marks = {"aaaaaaaaaaaaaaaa": {"/l": {"line": 300}}, "bbbbbbbbbbbbbbbb": {"/l": {"line": 50}}}
    assert covered({"/l": lines}, marks, "aaaaaaaaaaaaaaaa") == 50
    assert advanced({"/l": {"line": 400.0}, "/m": {"at": 1.0}}, {"/l": mixed}) == {
        "/l": {"line": 400.0, "uptime": 5.0, "at": 10.0}, "/m": {"at": 1.0}}


def test_a_log_no_record_can_name_gets_no_mark(tmp_path: Path) -> None:
    """A log's name with a control character (found by the records' property test: the incident
    was written and then refused by its reader) is read, and left out of the marks."""
    started = Counted(1, (("line", 3),))
    marks = advanced(None, {"/var/log/a\x1fb.log": started, "relative.log": started, "/var/log/한국.log": started})
    assert marks == {"/var/log/한국.log": {"line": 3}}


def test_a_start_no_record_can_hold_gets_no_mark_and_the_bounds_are_the_schemas() -> None:
    """Found by the records' property test: a line number past 2**63 was written, then refused."""
    huge = Counted(2, (("line", 2**63), ("at", 1.5e9)))
    assert advanced(None, {"/l": huge}) == {"/l": {"at": 1.5e9}}
    schema = json.loads((Path(tooling_package.__file__).parent / "schemas" / "incident.schema.json").read_text())
    kinds = schema["properties"]["watch_counted"]["additionalProperties"]["additionalProperties"]["properties"]
    assert {kind: (spec["minimum"], spec["maximum"]) for kind, spec in kinds.items()} == BOUNDS


# holds the lock a watch files under, as a writer that is killed while filing would
HOLD = """
import sys, time
from pathlib import Path
from tooling.writers.ids import held_folder
with held_folder(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(600)
"""
