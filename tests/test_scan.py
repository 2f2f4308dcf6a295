"""`tooling scan` and `tooling new-incident --from-log`: failures found in raw logs (dmesg, NCCL,
SLURM output, tracebacks), one draft per distinct failure, filed only when asked."""
from __future__ import annotations

import gzip
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from support import CORPUS, PROJECT, snapshot, tooling
from tooling.catalogue import engine, recognise
from tooling.logs import flagged, scan
from tooling.logs.context import context
from tooling.writers.filing import as_json

LOGS = CORPUS / "logs"
JOB = LOGS / "demo-7b-job-48213.log"
NOW = "2026-11-29T12:00:00+00:00"
JOB_LINES = JOB.read_text(encoding="utf-8").split("\n")
UTC = "the log gives no time zone: taken as UTC"
NO_YEAR = "the log gives no year: taken as 2026"


def lines(*numbers: int) -> list[str]:
    """Lines of the job log by number: signatures are these lines, verbatim."""
    return [JOB_LINES[n - 1] for n in numbers]


def where(first: int, last: int, count: int, log: str = "job.log") -> list[dict[str, Any]]:
    return [{"log": log, "first_line": first, "last_line": last, "count": count}]


def inherited(line: int, log: str = "job.log") -> str:
    return f"its time is that of line {line} of {log}, the last timestamped line before it"


# The job log mixes healthy training output (steps, NCCL INFO, a FutureWarning) with five failures
# and their aftermath (aborts, torchrun's ChildFailedError summaries, a SignalException).
FIVE = [
    {"title": "GPU fell off the bus (Xid 79) on node042", "failure_mode": "gpu.fell-off-bus",
     "layer": "gpu-hardware", "symptom": "crash",
     "signatures": ["Nov  2 03:14:02 node042 kernel: [812345.678934] NVRM: Xid (PCI:0000:ca:00): 79, pid='<unknown>', "
                    "name=<unknown>, GPU has fallen off the bus.",
                    "Nov  2 03:14:02 node042 kernel: [812345.678951] NVRM: GPU 0000:ca:00.0: GPU has fallen off the bus."],
     "codes": ["Xid 79"], "nodes": ["node042"], "ranks": [], "detected_at": "2026-11-02T03:14:02+00:00",
     "count": 2, "logs": where(36, 37, 2), "notes": [UTC, NO_YEAR]},
    {"title": "Collective timed out (NCCL watchdog) on ranks 3, 5 (node042)", "failure_mode": "nccl.collective-timeout",
     "layer": "nccl", "symptom": "hang", "signatures": lines(71, 73, 74, 76, 78),
     "codes": [], "nodes": ["node042"], "ranks": [3, 5], "detected_at": "2026-11-02T03:52:10+00:00",
     "count": 12, "logs": where(71, 90, 12), "notes": [UTC, NO_YEAR]},
    {"title": "CUDA out of memory on rank 14 (node043)", "failure_mode": "cuda.oom", "layer": "model-code",
     "symptom": "crash", "signatures": lines(162), "codes": ["OutOfMemoryError"], "nodes": ["node043"],
     "ranks": [14], "detected_at": "2026-11-02T04:07:22+00:00", "count": 1, "logs": where(162, 162, 1),
     "notes": [inherited(150), UTC]},
    {"title": "Job preempted by the scheduler on node042", "failure_mode": "scheduler.preemption",
     "layer": "scheduler", "symptom": "crash",
     "signatures": ["slurmstepd: error: *** STEP 48213.0 ON node042 CANCELLED AT 2026-11-02T05:00:00 DUE TO PREEMPTION ***",
                    "slurmstepd: error: *** JOB 48213 ON node042 CANCELLED AT 2026-11-02T05:00:00 DUE TO PREEMPTION ***"],
     "codes": [], "nodes": ["node042"], "ranks": [], "detected_at": "2026-11-02T05:00:00+00:00", "count": 2,
     "logs": where(219, 220, 2), "notes": [UTC]},
    {"title": "No space left on device (errno 28) on rank 0 (node042)", "failure_mode": "storage.disk-full",
     "layer": "storage", "symptom": "checkpoint",
     "signatures": ["[rank0]: OSError: [Errno 28] No space left on device: '/checkpoints/demo-7b/step-003000/model.pt.tmp'"],
     "codes": ["errno 28 (ENOSPC)", "OSError"], "nodes": ["node042"], "ranks": [0],
     "detected_at": "2026-11-02T06:00:00+00:00", "count": 1, "logs": where(268, 268, 1), "notes": [inherited(260), UTC]},
]
# (36 lines: the ranks' deaths, "Exited with exit code 1" and torchrun's "exitcode  : 1", are read
# too, as other.unclassified, and are the aftermath of the failures before them, as is torchrun's
# agent told SIGTERM by the preemption, a stop from outside)
HEADER = ["job.log: 293 lines, 36 naming a failure",
          "5 distinct failures; 18 more lines taken as their aftermath (a rank that aborts or raises, torchrun "
          "reporting it)"]


@pytest.fixture
def job(repo: Path) -> Path:
    shutil.copy(JOB, repo / "job.log")
    return repo / "job.log"


def scan_json(*args: str, cwd: Path, stdin: str | None = "") -> list[dict[str, Any]]:
    result = tooling("--now", NOW, "scan", *args, "--json", cwd=cwd, stdin=stdin)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_json_drafts_exactly_the_five_failures_of_a_job_log(job: Path) -> None:
    assert scan_json("job.log", cwd=job.parent) == FIVE


def test_without_write_the_drafts_are_shown_and_nothing_is_written(job: Path) -> None:
    before = snapshot(job.parent)
    result = tooling("--now", NOW, "scan", "job.log", cwd=job.parent)
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert out[:2] == HEADER
    assert [line for line in out if line[:2] in {f"{n}." for n in range(1, 6)}] == [
        f"{n}. {draft['title']}" for n, draft in enumerate(FIVE, 1)]
    assert out[3:9] == [
        "1. GPU fell off the bus (Xid 79) on node042",
        "   gpu.fell-off-bus (layer gpu-hardware, symptom crash); codes: Xid 79",
        f"   detected 2026-11-02T03:14:02+00:00 ({UTC}; {NO_YEAR})",
        "   job.log lines 36-37 (2 lines)",
        f"   | {FIVE[0]['signatures'][0]}",
        f"   | {FIVE[0]['signatures'][1]}"]
    assert out[-1] == ("nothing written; to file these as incidents: tooling scan LOG... --write --run RUN "
                       "(or --cluster NAME)")
    assert snapshot(job.parent) == before


def test_write_files_one_valid_incident_per_failure(job: Path) -> None:
    result = tooling("--now", NOW, "scan", "job.log", "--write", "--run", "demo-7b", cwd=job.parent)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-5:] == [f"created incidents/INC-000{n}.yaml" for n in range(3, 8)]
    assert tooling("validate", "--strict", cwd=job.parent).returncode == 0
    for number, draft in enumerate(FIVE, 3):
        record = yaml.safe_load((job.parent / "incidents" / f"INC-000{number}.yaml").read_text())
        assert {k: record[k] for k in ("title", "run", "status", "severity", "symptom", "layer", "failure_mode",
                                       "signatures", "nodes", "ranks")} == {
            "title": draft["title"], "run": "demo-7b", "status": "open", "severity": "unknown",
            "symptom": draft["symptom"], "layer": draft["layer"], "failure_mode": draft["failure_mode"],
            "signatures": draft["signatures"], "nodes": draft["nodes"], "ranks": draft["ranks"]}
        assert str(record["detected_at"]).replace(" ", "T") == draft["detected_at"]
        assert record["links"] == [{"title": "log scanned: job.log", "url": str(job)}]
    first = yaml.safe_load((job.parent / "incidents" / "INC-0003.yaml").read_text())
    assert first["notes"] == (f"Drafted by tooling scan from job.log lines 36-37 (2 lines). Codes: Xid 79. "
                              f"Times: {UTC}; {NO_YEAR}.")


def test_write_for_a_cluster_with_json_names_the_files(job: Path) -> None:
    result = tooling("--now", NOW, "scan", "job.log", "--write", "--cluster", "rsc-1", "--json", cwd=job.parent)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [f"created incidents/INC-000{n}.yaml" for n in range(3, 8)]
    drafts = json.loads(result.stdout)
    assert drafts == [{**d, "incident": f"incidents/INC-000{n}.yaml"} for n, d in enumerate(FIVE, 3)]
    record = yaml.safe_load((job.parent / "incidents" / "INC-0005.yaml").read_text())
    assert (record["scope"], record["cluster"], "run" in record) == ("cluster", "rsc-1", False)
    assert tooling("validate", "--strict", cwd=job.parent).returncode == 0


def test_gzip_and_standard_input_give_the_same_drafts(job: Path) -> None:
    with gzip.open(job.parent / "job.log.gz", "wb") as packed:
        packed.write(JOB.read_bytes())
    shutil.copy(job.parent / "job.log.gz", job.parent / "job-log-without-suffix")  # gzip is told by its bytes
    for name in ("job.log.gz", "job-log-without-suffix"):
        assert scan_json(name, cwd=job.parent) == [{**d, "logs": where(*_span(d), log=name),
                                                     "notes": _renamed(d["notes"], name)} for d in FIVE]
    from_stdin = scan_json("-", cwd=job.parent, stdin=JOB.read_text())
    assert from_stdin == [{**d, "logs": where(*_span(d), log="standard input"),
                           "notes": _renamed(d["notes"], "standard input")} for d in FIVE]


def _span(draft: dict[str, Any]) -> tuple[int, int, int]:
    log = draft["logs"][0]
    return log["first_line"], log["last_line"], log["count"]


def _renamed(notes: list[str], name: str) -> list[str]:
    return [n.replace("of job.log", f"of {name}") for n in notes]


@pytest.fixture
def restore_caches() -> Iterator[None]:
    """Compiled matchers are cached per process: start and end with fresh ones."""
    def clear() -> None:
        for cached in (flagged.matcher, flagged.recognise_line, recognise.recogniser, recognise._recognise_shape):
            cached.cache_clear()
    clear()
    yield
    clear()


@pytest.mark.usefixtures("restore_caches")
def test_chunk_boundaries_and_the_re_engine_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tracebacks and torchrun's summary cut by a chunk's end are read again whole with the next."""
    now = datetime.fromisoformat(NOW)
    expected = [{**d, "logs": where(*_span(d), log=str(JOB)), "notes": _renamed(d["notes"], str(JOB))} for d in FIVE]
    for size in (1500, 2048, 4096, 65536):
        result = scan.scan_logs([JOB], now=now, chunk=size)
        assert ([as_json(d) for d in result.drafts], result.consequences) == (expected, 18), size
    monkeypatch.setattr(engine, "hyperscan", None)
    flagged.matcher.cache_clear()
    recognise.recogniser.cache_clear()
    assert [as_json(d) for d in scan.scan_logs([JOB], now=now, chunk=4096).drafts] == expected


OTHER_LOGS = {
    "dmesg-T-node017.log": [
        {"title": "HBM memory error (uncorrectable ECC, row remapping) (Xid 48)", "failure_mode": "gpu.hbm-ecc",
         "layer": "gpu-hardware", "symptom": "crash", "signatures": [3, 4], "codes": ["Xid 48", "Xid 63"],
         "nodes": [], "ranks": [], "detected_at": "2026-11-02T03:14:02+00:00", "count": 2, "lines": (3, 4, 2),
         "notes": [UTC]}],
    "dmesg-uptime.log": [
        {"title": "GPU fell off the bus (Xid 79)", "failure_mode": "gpu.fell-off-bus", "layer": "gpu-hardware",
         "symptom": "crash", "signatures": [2, 3], "codes": ["Xid 79"], "nodes": [], "ranks": [], "detected_at": None,
         "count": 2, "lines": (2, 3, 2), "notes": ["the log gives no absolute time for it (only seconds since boot)"]}],
    # torchrun's "closing signal SIGTERM" and ChildFailedError are the aftermath of the rank the
    # kernel killed; its summary names the rank's host and global rank
    "torchrun-oom-killed.log": [
        {"title": "Host out of memory, process killed (exit 137) on rank 10 (node017)",
         "failure_mode": "host.oom-killed", "layer": "host", "symptom": "crash", "signatures": [4, 22],
         "codes": ["exit 137"], "nodes": ["node017"], "ranks": [10], "detected_at": "2026-11-03T01:10:41+09:00",
         "count": 2, "lines": (4, 22, 2),
         "notes": ["its line gives no time zone: taken as +09:00, the zone of line 1 of torchrun-oom-killed.log"]}],
    # two ranks' interleaved tracebacks end in the same ValueError; an AssertionError is another bug
    "python-bug.log": [
        {"title": "An error in the training code or a library (ValueError: token id 50311 is out of range for a "
                  "vocabulary of 50304) on ranks 1, 2", "failure_mode": "software.bug", "layer": "model-code",
         "symptom": "crash", "signatures": [11], "codes": ["ValueError"], "nodes": [], "ranks": [1, 2],
         "detected_at": "2026-11-04T10:20:00+00:00", "count": 2, "lines": (11, 13, 2),
         "notes": [inherited(1, "python-bug.log"), UTC]},
        {"title": "An error in the training code or a library (AssertionError)", "failure_mode": "software.bug",
         "layer": "model-code", "symptom": "crash", "signatures": [17], "codes": ["AssertionError"], "nodes": [],
         "ranks": [], "detected_at": "2026-11-04T10:20:00+00:00", "count": 1, "lines": (17, 17, 1),
         "notes": [inherited(1, "python-bug.log"), UTC]}],
}


@pytest.mark.parametrize("name", sorted(OTHER_LOGS))
def test_other_log_formats(name: str) -> None:
    text = (LOGS / name).read_text(encoding="utf-8").split("\n")
    expected = [{**{k: v for k, v in d.items() if k != "lines"}, "signatures": [text[n - 1] for n in d["signatures"]],
                 "logs": where(*d["lines"], log=name)} for d in OTHER_LOGS[name]]
    assert scan_json(name, cwd=LOGS) == expected


def test_deepspeeds_launcher_reporting_a_killed_rank_is_the_host_oom(tmp_path: Path) -> None:
    # the launcher's own words for a rank the kernel killed: "exits with return code = -9" is exit 137
    killed = ("[2023-04-07 13:09:33,202] [ERROR] [launch.py:324:sigkill_handler] ['/usr/bin/python', '-u', "
              "'train.py'] exits with return code = -9")
    (tmp_path / "ds.log").write_text("iteration 10 | loss 2.31\n" + killed + "\n")
    (draft,) = scan_json("ds.log", cwd=tmp_path)
    assert (draft["failure_mode"], draft["codes"], draft["signatures"]) == ("host.oom-killed", ["exit 137"], [killed])


def test_an_xid_the_driver_names_only_as_a_critical_error_is_scanned_by_its_number(tmp_path: Path) -> None:
    # the GSP driver recovering its channels says which Xid without the word: 48 is a double-bit ECC error
    line = "[ 12.5] NVRM: kgspRcAndNotifyAllChannels_IMPL: RC all channels for critical error 48."
    (tmp_path / "dmesg.log").write_text(f"step 1 ok\n{line}\nstep 2 ok\n")
    (draft,) = scan_json("dmesg.log", cwd=tmp_path)
    assert (draft["failure_mode"], draft["codes"], draft["signatures"]) == ("gpu.hbm-ecc", ["Xid 48"], [line])


LINE_CONTEXTS = [
    # line, its time (ISO, or None), host, rank
    ("2026-11-02T03:14:00.123+09:00 node042 kernel: NVRM: Xid 79", "2026-11-02T03:14:00.123000+09:00", "node042", None),
    ("Nov  2 03:14:02 node042 kernel: [812345.678934] NVRM: Xid 79", "2026-11-02T03:14:02+00:00", "node042", None),
    ("[Mon Nov  2 03:14:02 2026] NVRM: Xid 79", "2026-11-02T03:14:02+00:00", None, None),
    ("[812345.678934] NVRM: Xid 79", None, None, None),
    ("slurmstepd: error: *** JOB 48213 ON node042 CANCELLED AT 2026-11-02T05:00:00 DUE TO PREEMPTION ***",
     "2026-11-02T05:00:00+00:00", "node042", None),
    ("srun: error: node043: task 3: Exited with exit code 1", None, "node043", None),
    ("[rank3]:[E1102 03:52:10.412345 48301 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation",
     "2026-11-02T03:52:10.412345+00:00", None, 3),
    ("[PG 0 (default_pg) Rank 5] Process group watchdog thread terminated", None, None, 5),
    ("node042:48213:48390 [3] NCCL WARN Timeout waiting for connection", None, "node042", None),  # [3]: a device
    ("gpu-7:63755:63768 [0] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer",
     None, "gpu-7", None),  # NCCL's WARN lines name their source file before the level
    ("[rank3]:[E722 11:18:52.531176265 ProcessGroupNCCL.cpp:684] [Rank 3] Some NCCL operations have failed",
     "2026-07-22T11:18:52.531176+00:00", None, 3),  # c10's own logger: the month is not padded
    ("E1102 04:18:42.118000 140234 api.py:869] failed (exitcode: 1) local_rank: 6 (pid: 51384)",
     "2026-11-02T04:18:42.118000+00:00", None, None),  # local_rank is not a global rank
    ("[default6]:Traceback (most recent call last):", None, None, None),  # torchrun's tee prefix: a local rank
    ("  rank      : 14 (local_rank: 6)", None, None, 14),
    ("2026-11-02 06:00:00,004 INFO [checkpoint.py:77] saving checkpoint", "2026-11-02T06:00:00.004000+00:00", None, None),
    ("[2026-11-02 04:10:00,123] torch.distributed.elastic: [ERROR] global rank 7 failed",
     "2026-11-02T04:10:00.123000+00:00", None, 7),
]


@pytest.mark.parametrize(("line", "at", "host", "rank"), LINE_CONTEXTS)
def test_time_host_and_rank_of_a_line(line: str, at: str | None, host: str | None, rank: int | None) -> None:
    found = context(line, datetime.fromisoformat(NOW))
    when = found.when.at.isoformat() if found.when and found.when.at else None
    assert (when, found.host, found.rank) == (at, host, rank)


def test_terminal_colours_tabs_and_control_characters_are_cleaned(repo: Path) -> None:
    (repo / "colour.log").write_bytes(b"2026-11-05T08:00:00Z \x1b[31mERROR\x1b[0m\tsave failed: OSError: [Errno 28] "
                                      b"No space left on device\x07 \xff\r\n")
    drafts = scan_json("colour.log", cwd=repo)
    assert [(d["failure_mode"], d["signatures"], d["detected_at"], d["notes"]) for d in drafts] == [
        ("storage.disk-full", ["2026-11-05T08:00:00Z ERROR save failed: OSError: [Errno 28] No space left on device"
                               "\ufffd \ufffd"], "2026-11-05T08:00:00+00:00", [])]
    assert tooling("--now", NOW, "scan", "colour.log", "--write", "--run", "demo-7b", cwd=repo).returncode == 0
    assert tooling("validate", "--strict", cwd=repo).returncode == 0


EXPECTED_LOG = "expected a text log (dmesg, NCCL, SLURM output, tracebacks), gzipped or not"


def _bad_inputs(root: Path) -> dict[str, str]:
    (root / "logs").mkdir()
    (root / "core.bin").write_bytes(bytes(range(256)) * 8)
    (root / "latin1.bin").write_bytes(b"\xff\xfe" * 2000)  # bytes that UTF-8 never has, and no NUL
    (root / "bad.gz").write_bytes(b"\x1f\x8b" + b"not really gzip" * 10)
    (root / "cut.gz").write_bytes(gzip.compress(JOB.read_bytes())[:2000])
    return {
        "missing.log": f"missing.log: no such file; {EXPECTED_LOG}",
        "logs": f"logs: is a directory; {EXPECTED_LOG}",
        "core.bin": f"core.bin: binary data (a NUL byte at offset 0), not a log; {EXPECTED_LOG}",
        "latin1.bin": f"latin1.bin: binary data (4000 of its first 4000 bytes are not UTF-8 text), not a log; {EXPECTED_LOG}",
        "bad.gz": f"bad.gz: not a valid gzip file (Unknown compression method); {EXPECTED_LOG}",
        "cut.gz": f"cut.gz: not a valid gzip file (Compressed file ended before the end-of-stream marker was reached); "
                  f"{EXPECTED_LOG}",
    }


def test_bad_inputs_are_one_line_errors(repo: Path) -> None:
    for name, message in _bad_inputs(repo).items():
        before = snapshot(repo)
        result = tooling("scan", name, "--write", "--run", "demo-7b", cwd=repo)
        assert (result.returncode, result.stdout, result.stderr) == (1, "", f"tooling: error: {message}\n"), name
        assert snapshot(repo) == before


@pytest.mark.parametrize(("args", "message"), [
    (["--write"], "--write: expected --run RUN or --cluster NAME: where the incidents belong"),
    (["--write", "--run", "nope"], "--run: Expected one of: ['demo-7b'] but received: 'nope'"),
    (["--write", "--cluster", "Rsc 1"], "--cluster: expected lower-case letters, digits and dashes, such as rsc-1, "
                                        "but received 'Rsc 1'"),
    # drafts do not depend on the run: without --write it would be silently ignored
    (["--run", "demo-7b"], "--run has no effect without --write; expected --write --run RUN to file the drafts, "
                           "or no --run to only show them"),
    (["--cluster", "rsc-1", "--json"], "--cluster has no effect without --write; expected --write --cluster NAME "
                                       "to file the drafts, or no --cluster to only show them"),
])
def test_where_to_file_is_checked_before_the_logs_are_read(repo: Path, args: list[str], message: str) -> None:
    result = tooling("scan", "missing.log", *args, cwd=repo)
    assert (result.returncode, result.stderr) == (2, f"tooling: error: {message}\n")


def test_new_incident_from_log_files_one_incident_per_failure(job: Path) -> None:
    result = tooling("--now", NOW, "new-incident", "--from-log", "job.log", "--run", "demo-7b", "--severity", "sev2",
                     "--node", "node099", cwd=job.parent)
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if line.startswith("created")] == [
        f"created incidents/INC-000{n}.yaml" for n in range(3, 8)]
    for number, draft in enumerate(FIVE, 3):
        record = yaml.safe_load((job.parent / "incidents" / f"INC-000{number}.yaml").read_text())
        assert {k: record[k] for k in ("title", "severity", "failure_mode", "signatures", "nodes", "ranks")} == {
            "title": draft["title"], "severity": "sev2", "failure_mode": draft["failure_mode"],
            "signatures": draft["signatures"], "nodes": ["node099"], "ranks": draft["ranks"]}  # --node overrides
    assert tooling("validate", "--strict", cwd=job.parent).returncode == 0


# What new-incident --from-log printed for the job log's five failures when it analysed the
# repository once per incident filed (54dce08): the same, from one analysis.
NO_REPEAT = "no earlier incident looks like this one"
FILED = "".join(f"created incidents/INC-000{n}.yaml\n" + (
    "likely repeats (confirm with: tooling set INC-0003 repeat_of=ID):\n"
    "  INC-0001  same failure mode gpu.fell-off-bus: Xid 79 on node042, GPU fell off the bus\n" if n == 3 else
    f"{NO_REPEAT}\n") for n in range(3, 8))
NOT_VALID = "(likely repeats not shown: other records do not validate; run tooling validate)\n"


@pytest.mark.parametrize(("broken", "stdout", "stderr", "analyses"), [
    (False, FILED, "", 1),
    (True, "".join(f"created incidents/INC-000{n}.yaml\n" for n in range(3, 8)), NOT_VALID * 5, 0),
])
def test_new_incident_from_log_analyses_the_repository_once_for_every_failure(
        job: Path, monkeypatch: pytest.MonkeyPatch, broken: bool, stdout: str, stderr: str, analyses: int) -> None:
    from tooling import analysis  # where load_analysis finds the two steps it counts

    if broken:  # another record does not validate: the likely repeats are not shown, for each incident
        other = job.parent / "incidents" / "INC-0002.yaml"
        other.write_text(other.read_text().replace("severity: sev2", "severity: bogus"))
    calls = {"validate": 0, "analyse": 0}

    def counted(name: str) -> Any:
        real = getattr(analysis, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)
        return call

    for name in calls:  # load_analysis reads the records (validate), then analyses them
        monkeypatch.setattr(analysis, name, counted(name))
    result = tooling("--now", NOW, "new-incident", "--from-log", "job.log", "--run", "demo-7b", "--severity", "sev2",
                     cwd=job.parent)
    assert (result.returncode, result.stdout, result.stderr) == (0, stdout, stderr)
    assert calls == {"validate": 1, "analyse": analyses}


@pytest.mark.parametrize(("log", "args", "code", "message"), [
    ("job.log", ["--run", "demo-7b"], 2,
     "missing --severity (standard input is not a terminal, so tooling cannot ask; pass them as options)"),
    ("job.log", ["--run", "nope", "--severity", "sev2"], 2, "--run: Expected one of: ['demo-7b'] but received: 'nope'"),
    ("quiet.log", ["--run", "demo-7b", "--severity", "sev2"], 1,
     "quiet.log: no failure recognised in its 2 lines; nothing filed (file it without --from-log)"),
])
def test_new_incident_from_log_writes_nothing_until_it_can_write_everything(
        job: Path, log: str, args: list[str], code: int, message: str) -> None:
    (job.parent / "quiet.log").write_text("step 1 loss 2.31\nstep 2 loss 2.30\n")
    before = snapshot(job.parent)
    result = tooling("--now", NOW, "new-incident", "--from-log", log, *args, cwd=job.parent)
    assert (result.returncode, result.stderr) == (code, f"tooling: error: {message}\n")
    assert snapshot(job.parent) == before


def test_a_200_mb_log_is_scanned_in_bounded_memory(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("bench_scan", PROJECT / "tests" / "bench" / "bench_scan.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)  # its log generator: the benchmark's lines, a fifth of its size
    write_log, FAILURE_MODES = bench.write_log, bench.FAILURE_MODES
    log = tmp_path / "train.log"
    total, failures = write_log(log, 200_000_000)
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec, so a child of this (large) test
    # process would report this process's memory as its own
    measure = ("import re, sys; from tooling.main import main; code = main(sys.argv[1:]); "
               "status = open('/proc/self/status').read(); "
               "print(re.search(r'VmHWM:\\s+(\\d+)', status).group(1), file=sys.stderr); sys.exit(code)")
    result = subprocess.run([sys.executable, "-c", measure, "--now", NOW, "scan", str(log), "--json"], cwd=PROJECT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    peak_mib = int(result.stderr.splitlines()[-1]) / 1024
    assert peak_mib < 200, f"peak RSS {peak_mib:.0f} MiB"
    found: dict[str, int] = {}
    for draft in json.loads(result.stdout):
        found[draft["failure_mode"]] = found.get(draft["failure_mode"], 0) + draft["count"]
        assert draft["logs"][0]["last_line"] <= total
    expected = {mode: len(range(kind, failures, len(FAILURE_MODES))) for kind, mode in enumerate(FAILURE_MODES)}
    assert found == {mode: count for mode, count in expected.items() if count}


def test_one_failure_in_two_logs_is_one_draft(job: Path) -> None:
    shutil.copy(LOGS / "dmesg-uptime.log", job.parent / "uptime.log")
    drafts = scan_json("job.log", "uptime.log", cwd=job.parent)
    assert [d["failure_mode"] for d in drafts] == [d["failure_mode"] for d in FIVE]
    assert drafts[0] == {**FIVE[0], "count": 4, "logs": [*where(36, 37, 2), *where(2, 3, 2, log="uptime.log")]}


def test_new_incident_from_log_asks_the_run_once_and_the_severity_of_each_failure(repo: Path) -> None:
    import pexpect

    shutil.copy(LOGS / "python-bug.log", repo / "bug.log")
    child = pexpect.spawn(sys.executable, ["-m", "tooling", "--now", NOW, "new-incident", "--from-log", "bug.log"],
                          cwd=str(repo), encoding="utf-8", timeout=30)
    child.expect_exact("Training run [demo-7b] (default: demo-7b): ")
    child.sendline("")
    for title, severity in ((OTHER_LOGS["python-bug.log"][0]["title"], "sev3"), ("(AssertionError)", "sev4")):
        child.expect_exact(title)
        child.expect_exact("Severity [sev1/sev2/sev3/sev4/unknown]: ")
        child.sendline(severity)
    child.expect_exact("created incidents/INC-0003.yaml")
    child.expect_exact("created incidents/INC-0004.yaml")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    severities = [yaml.safe_load((repo / "incidents" / f"INC-000{n}.yaml").read_text())["severity"] for n in (3, 4)]
    assert severities == ["sev3", "sev4"]


XID = "2026-11-02T03:00:00 node042 kernel: NVRM: Xid (PCI:0000:ca:00): 79, pid=1234, GPU has fallen off the bus."
WATCHDOG = ("[rank5]:[E1102 {at} ProcessGroupNCCL.cpp:616] [Rank 5] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=1, NumelOut=1{timeout}) ran for {ran} milliseconds "
            "before timing out.")


@pytest.mark.parametrize(("timeout", "drafts"), [
    (", Timeout(ms)=1800000", ["gpu.fell-off-bus"]),  # it waited 30 minutes: for the GPU that fell off
    ("", ["gpu.fell-off-bus", "nccl.collective-timeout"]),  # 31 minutes later, nothing says it waited
])
def test_a_timeout_is_the_aftermath_of_a_failure_as_long_before_as_it_says_it_waited(
        tmp_path: Path, timeout: str, drafts: list[str]) -> None:
    ran = "1800083" if timeout else "unknown"
    (tmp_path / "job.log").write_text(f"{XID}\n" + WATCHDOG.format(at="03:31:00.000000", timeout=timeout, ran=ran)
                                      + "\n")
    assert [d["failure_mode"] for d in scan_json("job.log", cwd=tmp_path)] == drafts


NCCL_TRACE = """\
mbay-csp3:11509:11566 [6] NCCL INFO misc/socket.cc:47 -> 3
mbay-csp3:11509:11566 [6] NCCL INFO bootstrap.cc:306 -> 3
mbay-csp3:11509:11566 [6] NCCL INFO init.cc:1393 -> 3
mbay-csp3:11509:11566 [6] NCCL INFO group.cc:70 -> 3 [Async thread]
"""


def test_the_error_nccl_returned_is_a_failure_where_no_warn_line_said_it(tmp_path: Path) -> None:
    (tmp_path / "trace.log").write_text(NCCL_TRACE)
    (draft,) = scan_json("trace.log", cwd=tmp_path)
    assert (draft["failure_mode"], draft["codes"], draft["nodes"]) == ("nccl.init-failure", ["ncclInternalError"], ["mbay-csp3"])
    assert draft["signatures"] == ["mbay-csp3:11509:11566 [6] NCCL INFO group.cc:70 -> 3 [Async thread]"]


def test_the_trace_of_an_error_a_warn_line_said_drafts_nothing_more(tmp_path: Path) -> None:
    warn = "mbay-csp3:11509:11566 [6] include/alloc.h:112 NCCL WARN Cuda failure 'out of memory'"
    (tmp_path / "trace.log").write_text(f"{warn}\n{NCCL_TRACE.replace('-> 3', '-> 1')}")
    assert [d["failure_mode"] for d in scan_json("trace.log", cwd=tmp_path)] == ["cuda.oom"]


def test_a_vaguer_line_right_after_a_failure_it_is_a_form_of_is_that_failure(tmp_path: Path) -> None:
    lines = ["[W socket.cpp:464] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address "
             "already in use).",
             "[E socket.cpp:500] [c10d] The server socket has failed to listen on any local network address."]
    (tmp_path / "rdzv.log").write_text("\n".join(lines) + "\n")
    assert [d["failure_mode"] for d in scan_json("rdzv.log", cwd=tmp_path)] == ["network.port-in-use"]
    (tmp_path / "alone.log").write_text(lines[1] + "\n")  # alone it is the rendezvous that failed
    assert [d["failure_mode"] for d in scan_json("alone.log", cwd=tmp_path)] == ["network.rendezvous-failure"]


def test_an_allocation_of_an_impossible_size_is_the_aftermath_not_an_out_of_memory(tmp_path: Path) -> None:
    # a broadcast that timed out left garbage where a buffer's size should be: not memory pressure,
    # while a real out-of-memory is the failure the others' timeout waited on
    bogus = "[rank5]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate more than 1EB memory."
    real = "[rank5]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB."
    for name, line, drafts in (("bogus.log", bogus, ["nccl.collective-timeout"]),
                               ("real.log", real, ["cuda.oom"])):
        (tmp_path / name).write_text(WATCHDOG.format(at="03:31:00.000000", timeout="", ran="unknown") + f"\n{line}\n")
        assert [d["failure_mode"] for d in scan_json(name, cwd=tmp_path)] == drafts
    (tmp_path / "alone.log").write_text(bogus + "\n")
    assert [d["failure_mode"] for d in scan_json("alone.log", cwd=tmp_path)] == ["cuda.impossible-allocation"]


def _crashed_log() -> bytes:
    """A log cut by a crash: its last block's unwritten end left as NUL bytes (some 3 KiB, in the
    first 8 KiB), then what was written after the reboot, on the same line as the cut one."""
    before = (b"2026-11-29T05:58:00Z step 10 | loss 2.31\n"
              b"2026-11-29T05:59:00Z NVRM: Xid (PCI:0000:ca:00): 48, pid=4242, name=python3, "
              b"An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer.\n"
              b"2026-11-29T06:00:00Z step 11 | lo")
    after = (b"2026-11-29T06:05:00Z kernel: NVRM: Xid (PCI:0000:ca:00): 79, pid=4242, name=python3, "
             b"GPU has fallen off the bus.\n")
    return before + b"\0" * (4096 - len(before)) + after


def test_a_log_padded_with_nul_bytes_by_a_crash_is_read(repo: Path, tmp_path: Path) -> None:
    """Issue 21, defect 9: NUL bytes in the first 8 KiB refused the whole log as binary data (the
    same bytes later were read): a crash's padding is text's, and what follows it a line of its own."""
    (repo / "crashed.log").write_bytes(_crashed_log())
    drafts = scan_json("crashed.log", cwd=repo)
    assert [(d["failure_mode"], d["signatures"], d["detected_at"]) for d in drafts] == [
        ("gpu.hbm-ecc", ["2026-11-29T05:59:00Z NVRM: Xid (PCI:0000:ca:00): 48, pid=4242, name=python3, An "
                         "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer."],
         "2026-11-29T05:59:00+00:00"),
        ("gpu.fell-off-bus", ["2026-11-29T06:05:00Z kernel: NVRM: Xid (PCI:0000:ca:00): 79, pid=4242, "
                              "name=python3, GPU has fallen off the bus."], "2026-11-29T06:05:00+00:00")]
    result = tooling("--now", NOW, "watch", "crashed.log", "--run", "demo-7b", "--once", "--state",
                     str(tmp_path / "offsets.json"), cwd=repo)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.splitlines() == [
        "created incidents/INC-0003.yaml: HBM memory error (uncorrectable ECC, row remapping) (Xid 48)",
        "created incidents/INC-0004.yaml: GPU fell off the bus (Xid 79)"]


def test_binary_files_are_still_refused(repo: Path) -> None:
    """NULs alone or in pairs between other bytes are binary data, as in an executable (an ELF
    file's type, two bytes from offset 16, ends in one) or UTF-16 text; bytes UTF-8 never has too."""
    executable = Path(os.path.realpath(sys.executable)).read_bytes()[:1 << 16]
    if not executable.startswith(b"\x7fELF\x02\x01"):
        pytest.skip("the interpreter is not a 64-bit little-endian ELF executable")
    (repo / "python.bin").write_bytes(executable)
    (repo / "utf16.log").write_bytes("step 1 | loss 2.31\n".encode("utf-16-le") * 10)
    for name, offset in (("python.bin", 17), ("utf16.log", 1)):
        result = tooling("scan", name, cwd=repo)
        assert (result.returncode, result.stdout, result.stderr) == (
            1, "", f"tooling: error: {name}: binary data (a NUL byte at offset {offset}), not a log; {EXPECTED_LOG}\n")
