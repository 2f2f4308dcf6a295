"""`tooling()` in the test process answers as the real executable does, and leaves the test
process as it found it (tests/in_process.py)."""
from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

import in_process
from support import CORPUS, snapshot

NOW = "2026-11-30T12:00:00+00:00"
LOG = (CORPUS / "logs" / "demo-7b-job-48213.log").read_text(encoding="utf-8")
BROKEN = "kind: incident\nid: INC-0003\ntitle: [unclosed\n"

# command line, standard input: read, written, refused, a usage error, --help (SystemExit),
# standard input read, a control character in an argument, a bug-free failure of a record
CALLS = [
    (["validate"], ""),
    (["validate", "--strict", "incidents/INC-0001.yaml"], ""),
    (["--help"], ""),
    (["report", "--help"], ""),
    (["nonsense"], ""),
    (["set", "INC-0002", "status=resolvd"], ""),
    (["set", "INC-0002", "title=Renamed in place"], ""),
    (["--now", NOW, "new-incident", "--title", "Hang on node7", "--run", "demo-7b", "--severity", "sev2",
      "--symptom", "hang"], ""),
    (["--now", NOW, "scan", "-", "--json"], LOG),
    (["--now", NOW, "scan", "-", "--write", "--run", "demo-7b"], LOG),
    (["repeats"], ""),
    (["export", "--jsonl"], ""),
    (["new-run", "bad\x07name"], ""),
    (["validate", "incidents/INC-0003.yaml"], None),
]


def _copy(tmp_path: Path, name: str, *, broken: bool) -> Path:
    root = tmp_path / name
    root.mkdir()
    for folder in ("incidents", "runbooks"):
        shutil.copytree(CORPUS / folder, root / folder)
    (root / "mkdocs.yml").write_text("site_name: test\n")
    if broken:
        (root / "incidents" / "INC-0003.yaml").write_text(BROKEN)
    return root


@pytest.mark.parametrize("args, stdin", CALLS, ids=[" ".join(a)[:40] for a, _ in CALLS])
def test_the_same_answer_and_the_same_files_as_the_executable(tmp_path: Path, args: list[str],
                                                              stdin: str | None) -> None:
    broken = args[-1] == "incidents/INC-0003.yaml"
    here, there = _copy(tmp_path, "in-process", broken=broken), _copy(tmp_path, "executable", broken=broken)
    inside = in_process.run(args, cwd=here, timeout=60, stdin=stdin, env=None)
    outside = subprocess.run([sys.executable, "-m", "tooling", *args], cwd=there, input=stdin,
                             capture_output=True, text=True, timeout=60)
    assert (inside.returncode, inside.stdout, inside.stderr) == (outside.returncode, outside.stdout, outside.stderr)
    assert inside.args == outside.args
    assert snapshot(here) == snapshot(there)


def _process_state() -> dict[str, Any]:
    return {
        "cwd": os.getcwd(), "environ": dict(os.environ), "argv": list(sys.argv),
        "streams": (sys.stdin, sys.stdout, sys.stderr),
        "descriptors": [(os.fstat(n).st_dev, os.fstat(n).st_ino) for n in (0, 1, 2)],
        "signals": {n: signal.getsignal(n) for n in signal.valid_signals() if n not in (signal.SIGKILL, signal.SIGSTOP)},
        "logging": (list(logging.getLogger().handlers), logging.getLogger().level),
        "warnings": list(warnings.filters), "showwarning": warnings.showwarning,
        "timezone": (time.timezone, time.tzname),
    }


@pytest.mark.parametrize("args", [["validate"], ["--help"], ["nonsense"], ["validate", "incidents/INC-0003.yaml"],
                                  ["--now", NOW, "watch", "train.log", "--run", "demo-7b", "--once"]])
def test_a_call_leaves_the_test_process_as_it_found_it(tmp_path: Path, args: list[str]) -> None:
    root = _copy(tmp_path, "repo", broken=True)
    (root / "train.log").write_text(LOG)
    before = _process_state()
    result = in_process.run(args, cwd=root, timeout=60, stdin="", env={"TZ": "Asia/Seoul", "COLUMNS": "50"})
    assert result.returncode in (0, 1, 2), result.stderr
    assert _process_state() == before


def test_the_environment_is_the_callers_with_env_added(tmp_path: Path) -> None:
    """What a command reads of the environment (here: the time zone of its local 'now', and the
    reporter's name) is what a process started with ``env`` would read."""
    root = _copy(tmp_path, "repo", broken=False)
    env = {"TZ": "Asia/Seoul", "USER": "dana"}
    args = ["new-incident", "--title", "Hang on node7", "--run", "demo-7b", "--severity", "sev2", "--symptom", "hang"]
    inside = in_process.run(args, cwd=root, timeout=60, stdin="", env=env)
    assert inside.returncode == 0, inside.stderr
    text = (root / "incidents" / "INC-0003.yaml").read_text()
    assert "reported_by: dana" in text and "+09:00" in text


def test_what_a_program_the_command_starts_writes_is_in_the_output() -> None:
    with in_process._streams("") as output:
        print("from the command", flush=True)
        subprocess.run(["sh", "-c", "echo from its child; echo to stderr >&2"], check=True)
    assert output == [b"from the command\nfrom its child\n", b"to stderr\n"]


def test_a_call_past_its_timeout_raises_as_subprocess_does(tmp_path: Path) -> None:
    root = _copy(tmp_path, "repo", broken=False)
    before = _process_state()
    with pytest.raises(subprocess.TimeoutExpired) as expired:
        in_process.run(["validate"], cwd=root, timeout=0.001, stdin="", env=None)
    assert expired.value.cmd == [sys.executable, "-m", "tooling", "validate"]
    assert _process_state() == before


@pytest.mark.parametrize("code, status, printed", [(None, 0, ""), (0, 0, ""), (4, 4, ""), (256 + 3, 3, ""),
                                                   ("a message", 1, "a message\n")])
def test_system_exit_is_the_status_the_interpreter_gives(code: object, status: int, printed: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    def leave() -> int:
        raise SystemExit(code)

    assert in_process._status(leave) == status
    assert capsys.readouterr().err == printed
