"""The hang watchdog: heartbeats from the ranks, `tooling watchdog` above the job.

The slow tests run lab 4's four gloo ranks under the watchdog, as a user would: one rank sleeps,
the watchdog must fire within timeout + 10 s, name that rank from the stacks (py-spy, or
faulthandler when forced), draft an incident that validates and leave no process of the job
alive; a healthy run must end with exit 0 and leave nothing behind.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from support import PROJECT, snapshot, tooling
from tooling.diagnose import flight_recorder
from tooling.diagnose.rank_dumps import descendants, environ
from tooling.diagnose.stacks import Frame, parse_dump
from tooling.resilience.watchdog import ENV_DIR, EXIT_HANG, Watchdog, rank_file, read_beat

LAB = PROJECT / "labs" / "04-hung-rank" / "train.py"
TIMEOUT = 20  # seconds without a beat: lab 4's steps take milliseconds even on 2 loaded cores


@dataclass
class Ended:
    code: int
    stderr: str
    pids: set[int]  # every process seen under the monitor while it ran
    at: float  # wall time the monitor exited


def watch(repo: Path, tmp_path: Path, job: list[str], *, options: list[str], env: dict[str, str],
          prefix: tuple[str, ...] = ()) -> Ended:
    """`tooling watchdog OPTIONS -- JOB` in ``repo``, noting every process under it while it runs."""
    log = tmp_path / "monitor.err"
    with open(log, "w") as err:
        monitor = subprocess.Popen([*prefix, sys.executable, "-m", "tooling", "watchdog", "--run", "demo-7b", *options,
                                    "--", *job],
                                   cwd=repo, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=err)
        seen: set[int] = set()
        deadline = time.monotonic() + 420
        while monitor.poll() is None:
            seen.update(descendants(monitor.pid))
            if time.monotonic() > deadline:
                monitor.kill()
                raise AssertionError("the watchdog did not end within 420 s")
            time.sleep(0.2)
    return Ended(monitor.returncode, log.read_text(), seen, time.time())


def lab(repo: Path, tmp_path: Path, *, hung: int, steps: int, stacks: str = "auto",
        beats: Path | None = None) -> Ended:
    env = {"HANG_RANK": str(hung), "HANG_STEP": "15", "HANG_STEPS": str(steps), "HANG_TIMEOUT": "600",
           "OMP_NUM_THREADS": "1", "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    options = ["--timeout", str(TIMEOUT), "--startup-timeout", "300", "--stacks", stacks]
    options += ["--dir", str(beats)] if beats else []
    job = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=4", str(LAB), "--watchdog"]
    return watch(repo, tmp_path, job, options=options, env=env)


def job_alive(ended: Ended, beats: Path) -> list[int]:
    """Processes of the job still alive: any seen under the monitor, or anywhere, that carries
    the job's heartbeat folder in its environment (a zombie's cannot be read: it is not alive)."""
    marked = [int(p.name) for p in Path("/proc").iterdir()
              if p.name.isdigit() and environ(int(p.name)).get(ENV_DIR) == str(beats)]
    return sorted({pid for pid in ended.pids if environ(pid)} | set(marked))


def assert_hang_handled(repo: Path, tmp_path: Path, ended: Ended, beats: Path, hung: int, dump: str) -> None:
    assert ended.code == EXIT_HANG, ended.stderr
    registrations = [json.loads(p.read_text()) for p in sorted(beats.glob("rank-*.json"))]
    assert sorted(r["rank"] for r in registrations) == [0, 1, 2, 3]
    assert {r["pid"] for r in registrations} <= ended.pids
    assert job_alive(ended, beats) == []
    stopped = max(read_beat(rank_file(beats, r["rank"], "beat").read_bytes())[1] for r in registrations)
    [path] = (repo / "incidents").glob("INC-0003.yaml")
    incident = yaml.safe_load(path.read_text())
    fired = incident["detected_at"].timestamp() - stopped  # YAML reads it as a datetime
    print(f"fired {fired:.1f} s after the last beat (timeout {TIMEOUT} s); job ended and incident drafted "
          f"{ended.at - stopped:.1f} s after it")
    assert TIMEOUT - 1 <= fired <= TIMEOUT + 10
    assert incident["ranks"] == [hung] and incident["title"].startswith(f"Rank {hung} hung in train_step (train.py:")
    [summary] = (repo / "incidents" / "dumps").glob("hang-*/watchdog.txt")
    text = summary.read_text()
    assert f"outlier: rank {hung}, which leaves the majority at depth 2" in text
    assert f"flight recorder: behind the others: rank {hung} at collective" in text
    linked = [repo / "incidents" / link["url"] for link in incident["links"]]
    assert sorted(p.name for p in linked) == sorted(["watchdog.txt", *(f"rank-{r}.{dump}" for r in range(4)),
                                                     *(f"rank-{r}.flight-recorder.json" for r in range(4))])
    assert all(p.is_file() for p in linked)
    assert tooling("validate", "--strict", cwd=repo).returncode == 0


@pytest.mark.slow
def test_a_sleeping_rank_is_named_dumped_filed_and_its_job_ended(repo: Path, tmp_path: Path) -> None:
    beats = tmp_path / "beats"
    ended = lab(repo, tmp_path, hung=2, steps=10_000, beats=beats)
    assert_hang_handled(repo, tmp_path, ended, beats, hung=2, dump="json")
    assert "stacks by py-spy:" in next((repo / "incidents" / "dumps").glob("*/watchdog.txt")).read_text()


@pytest.mark.slow
def test_faulthandler_takes_the_stacks_when_py_spy_is_not_used(repo: Path, tmp_path: Path) -> None:
    beats = tmp_path / "beats"
    ended = lab(repo, tmp_path, hung=1, steps=10_000, stacks="faulthandler", beats=beats)
    assert_hang_handled(repo, tmp_path, ended, beats, hung=1, dump="faulthandler.txt")
    text = next((repo / "incidents" / "dumps").glob("*/watchdog.txt")).read_text()
    assert "stacks by faulthandler:" in text and "rank 1 (1): stall_in_data_loading (train.py:" in text


@pytest.mark.slow
def test_a_healthy_job_ends_with_exit_0_and_leaves_nothing(repo: Path, tmp_path: Path) -> None:
    before = snapshot(repo)
    ended = lab(repo, tmp_path, hung=-1, steps=300)
    assert ended.code == 0, ended.stderr
    assert snapshot(repo) == before and not (repo / "incidents" / "dumps").exists()
    assert list((tmp_path / "tmp").glob("tooling-watchdog-*")) == []  # the heartbeat folder is gone too
    assert [pid for pid in ended.pids if environ(pid)] == []


THREADED = """
import faulthandler, threading, time
def helper():
    time.sleep(60)
def wait_in_main():
    threading.Thread(target=helper, daemon=True, name="helper").start()
    time.sleep(0.2)
    faulthandler.dump_traceback(all_threads=True)
wait_in_main()
"""


def test_faulthandler_dump_parses_to_the_main_thread(tmp_path: Path) -> None:
    """Real faulthandler output of a process with a second Python thread: the main thread's frames."""
    script = tmp_path / "threaded.py"
    script.write_text(THREADED)
    text = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60).stderr
    assert text.count("(most recent call first):") == 2
    frames = parse_dump(text)
    assert [f.name for f in frames] == ["wait_in_main", "<module>"]
    assert frames[0] == Frame("wait_in_main", str(script), 8)


def test_a_rank_registers_beats_into_shared_memory_and_serves_its_flight_recorder(tmp_path: Path) -> None:
    with Watchdog(tmp_path, rank=3) as watchdog:
        registration = json.loads(rank_file(tmp_path, 3, "json").read_text())
        assert registration["rank"] == 3 and registration["pid"] == os.getpid()
        assert registration["socket"] == str(rank_file(tmp_path, 3, "sock"))
        assert read_beat(rank_file(tmp_path, 3, "beat").read_bytes()) is None  # not beaten yet
        watchdog.beat(41)
        step, at = read_beat(rank_file(tmp_path, 3, "beat").read_bytes())
        assert step == 41 and abs(at - time.time()) < 5
        trace = flight_recorder.parse(flight_recorder.fetch(registration["socket"]))
        assert "version" in trace  # torch's own worker server answered, from its C++ thread
    assert rank_file(tmp_path, 3, "done").exists()


def test_without_the_monitor_the_watchdog_is_inert(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_DIR, raising=False)
    watchdog = Watchdog.from_env()
    watchdog.beat(1)
    watchdog.close()
    assert not watchdog.active
    with pytest.raises(RuntimeError, match="TOOLING_WATCHDOG_DIR is not set: run the job under the monitor"):
        Watchdog.from_env(required=True)


def test_the_flight_recorder_names_the_rank_behind() -> None:
    def trace(seq: int) -> dict[str, object]:
        return {"entries": [{"collective_seq_id": seq}],
                "pg_status": {"0": {"last_enqueued_collective": str(seq), "last_completed_collective": "59"}}}
    traces = {"0": trace(61), "1": trace(61), "2": trace(60), "3": trace(61)}
    assert flight_recorder.behind(traces) == ["2"]
    assert flight_recorder.verdict(traces) == ("flight recorder: behind the others: rank 2 at collective 60 of "
                                               "process group 0 (others reached 61)")
    assert flight_recorder.verdict({"0": {"entries": []}}).startswith("flight recorder: no collective recorded")


STUCK = textwrap.dedent("""
    import ctypes, sys, time
    from tooling.resilience.watchdog import Watchdog
    if sys.argv[1:] == ["--not-dumpable"]:  # PR_SET_DUMPABLE 0: only CAP_SYS_PTRACE may ptrace it
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
    watchdog = Watchdog.from_env(flight_recorder=False)
    watchdog.beat(7)
    def wait_for_ever():
        time.sleep(600)
    wait_for_ever()
""")


def test_one_stuck_process_is_dumped_filed_and_killed(repo: Path, tmp_path: Path) -> None:
    """The whole path without torch: one process beats once, then sleeps past a 2 s timeout."""
    beats = tmp_path / "beats"
    ended = watch(repo, tmp_path, [sys.executable, "-c", STUCK], options=["--timeout", "2", "--dir", str(beats)], env={})
    assert ended.code == EXIT_HANG, ended.stderr
    assert job_alive(ended, beats) == []
    incident = yaml.safe_load((repo / "incidents" / "INC-0003.yaml").read_text())
    assert incident["title"] == "No progress: the only rank stopped in wait_for_ever (<string>:9)"
    assert incident["timeline"][1]["event"] == (
        "no progress (timeout 2 s): rank 0: no beat for 2 s (last step 7)")
    assert "rank 0: flight recorder disabled." in incident["notes"]
    assert incident["handled_by"] == "collective-hang-watchdog"  # ended for auto-resume without a person
    assert tooling("validate", "--strict", cwd=repo).returncode == 0


def incident_pid(beats: Path) -> int:
    return json.loads(rank_file(beats, 0, "json").read_text())["pid"]


NO_PTRACE = ("setpriv", "--bounding-set", "-sys_ptrace", "--inh-caps", "-sys_ptrace")


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="drops CAP_SYS_PTRACE with setpriv, as root")
def test_where_py_spy_may_not_attach_faulthandler_takes_the_stacks(repo: Path, tmp_path: Path) -> None:
    """A real refusal: the monitor runs without CAP_SYS_PTRACE and the rank is not dumpable, so
    the kernel refuses py-spy (EPERM); the watchdog falls back to faulthandler by itself."""
    beats = tmp_path / "beats"
    ended = watch(repo, tmp_path, [sys.executable, "-c", STUCK, "--not-dumpable"], prefix=NO_PTRACE,
                  options=["--timeout", "2", "--dir", str(beats)], env={})
    assert ended.code == EXIT_HANG, ended.stderr
    assert job_alive(ended, beats) == []
    incident = yaml.safe_load((repo / "incidents" / "INC-0003.yaml").read_text())
    assert incident["title"] == "No progress: the only rank stopped in wait_for_ever (<string>:9)"
    assert "stacks by faulthandler" in incident["notes"]
    assert (f"py-spy could not dump every rank (py-spy dump --pid {incident_pid(beats)} failed: Error: Failed to "
            "get process executable name. Check that the process is running. (Permission denied (os error 13)))."
            in incident["notes"])
    [dump] = (repo / "incidents" / "dumps").glob("hang-*/rank-0.faulthandler.txt")
    assert 'line 9 in wait_for_ever' in dump.read_text()


def test_the_job_exit_code_passes_through_and_nothing_it_left_survives(repo: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "orphan.pid"
    job = ["sh", "-c", f"sleep 300 & echo $! > {pidfile}; exit 3"]
    ended = watch(repo, tmp_path, job, options=["--timeout", "5"], env={})
    assert ended.code == 3, ended.stderr
    orphan = int(pidfile.read_text())
    assert not environ(orphan), "the job's orphan still runs"
    assert "tooling watchdog: killed 1 processes the job left behind" in ended.stderr


def test_usage_errors_change_nothing(repo: Path) -> None:
    before = snapshot(repo)
    missing = tooling("watchdog", "--run", "demo-7b", cwd=repo)
    assert (missing.returncode, missing.stderr) == (2, "tooling: error: expected the job's command after --, e.g. "
                                                       "tooling watchdog --run demo-7b -- torchrun --nproc_per_node=4 "
                                                       "train.py\n")
    unknown = tooling("watchdog", "--run", "nope", "--", "true", cwd=repo)
    assert (unknown.returncode, unknown.stderr) == (2, "tooling: error: --run: Expected one of: ['demo-7b'] but "
                                                       "received: 'nope'\n")
    absent = tooling("watchdog", "--run", "demo-7b", "--", "no-such-command-here", cwd=repo)
    assert (absent.returncode, absent.stderr) == (2, "tooling: error: no-such-command-here: no such command; "
                                                     "expected the job's command after --\n")
    assert snapshot(repo) == before
