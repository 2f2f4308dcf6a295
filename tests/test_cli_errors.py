"""Every failure of the command line is one located line and an exact exit code, never a traceback."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from support import CORPUS, snapshot, tmpfs, tooling
from tooling.commands import validate as validate_command
from tooling.main import main
from tooling.records.load import load_file


def test_an_unexpected_exception_is_one_line_naming_the_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    def broken(*args: object, **kwargs: object) -> int:
        raise RuntimeError("a bug in a command")

    monkeypatch.setattr(validate_command, "run", broken)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    code = main(["--root", str(CORPUS), "validate"])
    log = tmp_path / "cache" / "tooling" / "tooling.log"
    assert code == 3
    assert capsys.readouterr().err == (f"tooling: internal error: RuntimeError: 'a bug in a command'; "
                                       f"the traceback is in {log} (please report it)\n")
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "RuntimeError: a bug in a command" in text


def test_invalid_utf8_and_control_characters_in_arguments_are_usage_errors(repo: Path) -> None:
    before = snapshot(repo)
    args = [b"new-incident", b"--title", b"Bad \xff title", b"--run", b"demo-7b", b"--severity", b"sev2",
            b"--symptom", b"hang"]
    result = subprocess.run([sys.executable, "-m", "tooling", *args], cwd=repo, capture_output=True, timeout=60)
    assert (result.returncode, result.stderr) == (
        2, b"tooling: error: argument 3 ('Bad '...): bytes that are not valid UTF-8; expected UTF-8 text\n")
    result = tooling("new-incident", "--title", "NCCL\x85timeout", "--run", "demo-7b", "--severity", "sev2",
                     "--symptom", "hang", cwd=repo)
    assert (result.returncode, result.stderr) == (
        2, "tooling: error: argument 3 ('NCCL'...): character U+0085 (NEL, a C1 line break); expected printable text\n")
    assert snapshot(repo) == before


@pytest.mark.parametrize("command", [["validate"], ["repeats"], ["build"], ["new-incident", "--title", "Xid 79 on n3"]])
def test_a_root_that_is_no_folder_is_a_usage_error_not_an_empty_repository(
        repo: Path, capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    """A mistyped --root used to read as a repository with no records: validate said "0 files
    checked" and exited 0."""
    (repo / "notes.txt").write_text("not a repository\n")
    before = snapshot(repo)
    for root, said in ((repo / "missing", "no such folder"), (repo / "notes.txt", "not a folder")):
        assert main(["--root", str(root), *command]) == 2
        assert capsys.readouterr().err == (
            f"tooling: error: --root: expected the repository's folder but received: '{root}' ({said})\n")
    assert snapshot(repo) == before


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A repository on a 256 KiB tmpfs of its own (root only), unmounted afterwards."""
    with tmpfs(tmp_path / "disk", "256k") as mount:
        for folder in ("incidents", "runbooks"):
            subprocess.run(["cp", "-r", str(CORPUS / folder), str(mount)], check=True)
        yield mount


COMMANDS = {
    "new-incident": (["new-incident", "--title", "Loss spiked at step 900", "--run", "demo-7b", "--severity",
                      "sev3", "--symptom", "divergence"], "incidents/INC-0003.yaml"),
    "set": (["set", "INC-0002", "root_cause=a flaky switch port"], "incidents/INC-0002.yaml"),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_full_disk_is_one_line_naming_the_file_and_changes_nothing(small_disk: Path, command: str) -> None:
    _fill(small_disk)
    before = snapshot(small_disk)
    args, target = COMMANDS[command]
    result = tooling(*args, cwd=small_disk)
    assert (result.returncode, result.stderr) == (
        1, f"tooling: error: {target}: no space left on device; free some space and run it again "
           "(nothing was changed)\n")
    assert snapshot(small_disk) == before  # no temporary file left behind either


def test_a_full_disk_at_the_first_incident_leaves_no_empty_folder(small_disk: Path) -> None:
    """The folder new-incident makes for its first record goes again when the record cannot be written."""
    subprocess.run(["rm", "-r", str(small_disk / "incidents")], check=True)
    _fill(small_disk)
    before = snapshot(small_disk)
    result = tooling(*COMMANDS["new-incident"][0], cwd=small_disk)
    assert (result.returncode, result.stderr) == (
        1, "tooling: error: incidents/INC-0001.yaml: no space left on device; free some space and run it again "
           "(nothing was changed)\n")
    assert snapshot(small_disk) == before and not (small_disk / "incidents").exists()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_read_only_repository_is_one_line_and_changes_nothing(small_disk: Path, command: str) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    before = snapshot(small_disk)
    args, target = COMMANDS[command]
    result = tooling(*args, cwd=small_disk)
    assert result.returncode == 1
    assert result.stderr.endswith(": read-only file system; run it where the repository is writable\n")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert snapshot(small_disk) == before


def _fill(folder: Path) -> None:
    """Fill the file system until a write fails, so that the next write cannot succeed."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


DUMP_ERRORS = [
    ("missing.json", None, "missing.json: no such file; expected a saved py-spy dump"),
    ("binary.json", b"\x7fELF\x02\x01\x01\x00\xff\xfe", "binary.json: invalid UTF-8 at byte 8; expected the text "
                                                        "or --json output of py-spy dump"),
    ("torn.json", b'[{"pid": 1,\n  "frames": [', "torn.json:2:14: invalid JSON (Expecting value); expected the "
                                                  "text or --json output of py-spy dump"),
    ("object.json", b'{"pid": 1}', "object.json: no thread with Python frames; expected the text or --json "
                                   "output of py-spy dump"),
    ("frames.json", b'[{"pid": 1, "os_thread_id": 1, "frames": [{"name": "f"}]}]',
     "frames.json:1:1: a frame without name, filename and line; expected the text or --json output of py-spy dump"),
    ("/dev/null", None, "/dev/null: not a regular file; expected a saved py-spy dump"),
]


@pytest.mark.parametrize("name, content, message", DUMP_ERRORS, ids=[d[0] for d in DUMP_ERRORS])
def test_stacks_refuses_what_is_not_a_dump(tmp_path: Path, name: str, content: bytes | None, message: str) -> None:
    if content is not None:
        (tmp_path / name).write_bytes(content)
    result = tooling("stacks", "--dumps", name, cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", f"tooling: error: {message}\n")


@pytest.mark.parametrize("args, message", [
    (["stacks", "--pids", "-5"], "tooling: error: stacks: argument --pids: expected a whole number >= 1 but "
                                 "received: '-5'"),
    (["stacks", "--pids", "0"], "tooling: error: stacks: argument --pids: expected a whole number >= 1 but "
                                "received: '0'"),
    (["triage", "hang", "--timeout", "nan"], "tooling: error: triage: argument --timeout: expected seconds between "
                                             "0 and 3600 but received: 'nan'"),
    (["--now", "yesterday", "validate"], "tooling: error: argument --now: expected a timestamp such as "
                                         "2026-11-29T12:00:00+00:00 but received: 'yesterday'"),
    (["serve", "--dev-addr", "nonsense"], "tooling: error: serve: argument --dev-addr: expected host:port such as "
                                          "127.0.0.1:8000 but received: 'nonsense'"),
    (["publish", "../x"], "tooling: error: publish: argument version: expected a version name of letters, digits, "
                          "dots and dashes such as 0.3 or 2026-11-29 but received: '../x'"),
])
def test_bad_numbers_stop_at_the_command_line(tmp_path: Path, args: list[str], message: str) -> None:
    result = tooling(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == message


def test_drafting_for_an_unknown_run_names_the_option_it_came_from(repo: Path) -> None:
    dumps = sorted(str(p) for p in (CORPUS / "stacks").iterdir())
    result = tooling("stacks", "--dumps", *dumps, "--incident", "demo-99b", cwd=repo)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "tooling: error: --incident: Expected one of: ['demo-7b'] but received: 'demo-99b'\n"


def test_a_ladder_without_steps_is_a_located_error(repo: Path) -> None:
    ladder = repo / "runbooks" / "ladders" / "hang.yaml"
    ladder.write_text("\n".join(line for line in ladder.read_text().splitlines() if not line.startswith(" "))
                      .replace("steps:", "") + "\n")
    result = tooling("triage", "hang", cwd=repo)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == ("tooling: error: the hang ladder does not validate:\n"
                             "runbooks/ladders/hang.yaml:1:1: [missing-field] missing required field 'steps'\n")


def test_set_addresses_list_items_by_number(repo: Path) -> None:
    path = repo / "runbooks" / "runs" / "demo-7b.yaml"
    before = snapshot(repo)
    result = tooling("set", "demo-7b", "oncall.shifts.99.person=ana", cwd=repo)
    shifts = len(load_file(str(path)).data["oncall"]["shifts"])
    assert (result.returncode, result.stderr) == (
        2, f"tooling: error: 'oncall.shifts.99.person': expected an item number from 0 to {shifts - 1} "
           "but received: '99'\n")
    result = tooling("set", "demo-7b", "title.x=y", cwd=repo)
    assert (result.returncode, result.stderr) == (
        2, "tooling: error: 'title.x': 'x' is inside a value that is neither a mapping nor a list\n")
    assert snapshot(repo) == before
    assert tooling("set", "demo-7b", "oncall.shifts.0.person=zed", cwd=repo).returncode == 0
    assert load_file(str(path)).data["oncall"]["shifts"][0]["person"] == "zed"


@pytest.mark.parametrize("args, line", [
    (["review"], "tooling: error: review: the following arguments are required: POSTMORTEM-ID"),
    (["bogus"], "tooling: error: argument COMMAND: Expected one of: ['init', 'validate', 'new-incident', 'new-postmortem', "
                "'new-run', 'set', 'report', 'job', 'scan', 'watch', 'import', 'export', 'build', 'serve', "
                "'publish', 'repeats', 'review', 'budget', 'stacks', 'triage', 'watchdog', 'health-check', "
                "'preflight', 'data-check', 'doctor'] "
                "but received: 'bogus'"),
    (["--now", "0001-01-01T00:00:00+00:00", "repeats"],
     "tooling: error: argument --now: expected a time in the years 1990-2099 but received: '0001-01-01T00:00:00+00:00'"),
    (["validate", "--no-such-flag"], "tooling: error: unrecognized arguments: --no-such-flag"),
])
def test_a_bad_command_line_is_one_line_without_the_usage_block(repo: Path, args: list[str], line: str) -> None:
    result = tooling(*args, cwd=repo)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", line + "\n")


def test_a_reader_that_leaves_early_ends_the_command_quietly() -> None:
    """`tooling scan LOG | head`: no 'broken pipe' error, the exit status a shell gives SIGPIPE."""
    code = ("import sys; from tooling.error_handler import run_handled; "
            "sys.exit(run_handled(lambda: [print('x' * 1000) for _ in range(10**5)] and 0))")
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.read(10)
    process.stdout.close()
    assert (process.wait(timeout=60), process.stderr.read()) == (141, b"")


def test_output_that_cannot_be_written_does_not_claim_nothing_changed(repo: Path) -> None:
    """The record is written before its name is printed: a full output must not say 'nothing was changed'."""
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "tooling", "new-incident", "--title", "Hang on node7 again",
                                 "--run", "demo-7b", "--severity", "sev3", "--symptom", "hang", "--layer", "unknown"],
                                cwd=repo, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (1, "tooling: error: no space left on device while writing the output\n")


def test_job_refuses_a_trainer_that_does_not_exist_before_recording_a_start(repo: Path) -> None:
    """The start was written, then the command failed: a start with no end in the run's timeline."""
    before = snapshot(repo)
    result = tooling("job", "demo-7b", "--", "no-such-trainer", "--lr", "1", cwd=repo, env={"SLURM_JOB_ID": "4242"})
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("tooling: error: COMMAND: 'no-such-trainer' is not an executable on PATH or a path to "
                             "one; expected the trainer after --, e.g. tooling job RUN -- python train.py\n")
    assert snapshot(repo) == before


def test_job_outside_slurm_reports_a_trainer_killed_by_sigkill_as_a_shell_does(repo: Path) -> None:
    result = tooling("job", "demo-7b", "--", "sh", "-c", "kill -9 $$", cwd=repo, env={"SLURM_JOB_ID": ""})
    assert result.returncode == 128 + 9, result.stderr  # was 247: Popen's -9 taken modulo 256


@pytest.mark.parametrize("args", [["demo-7b", "--log", "job.log", "--"], ["--log", "job.log", "demo-7b", "--"]],
                         ids=["option-after-run", "option-before-run"])
def test_job_takes_its_options_before_or_after_the_run(repo: Path, args: list[str]) -> None:
    """argparse gave the trainer only the words before the first option: `--log F -- cmd` after
    RUN was 'unrecognized arguments'."""
    result = tooling("job", *args, "sh", "-c", "exit 3", cwd=repo, env={"SLURM_JOB_ID": ""})
    assert (result.returncode, result.stderr) == (3, "tooling job: not inside a SLURM job (no SLURM_JOB_ID): running "
                                                     "the command without recording it\n")


def test_words_between_the_run_and_the_trainer_are_still_refused(repo: Path) -> None:
    result = tooling("job", "demo-7b", "--log", "job.log", "extra", "--", "true", cwd=repo, env={"SLURM_JOB_ID": ""})
    assert (result.returncode, result.stderr) == (2, "tooling: error: unrecognized arguments: extra -- true\n")


def test_a_run_record_that_does_not_load_is_its_own_error_not_one_per_incident_naming_it(repo: Path) -> None:
    run = repo / "runbooks" / "runs" / "demo-7b.yaml"
    run.write_text(run.read_text() + "id: [oops\n")
    whole = tooling("validate", cwd=repo)
    assert whole.returncode == 1
    assert [line.split(": [")[1].split("]")[0] for line in whole.stdout.splitlines()] == ["yaml-syntax"]
    assert whole.stdout.startswith("runbooks/runs/demo-7b.yaml:")
    alone = tooling("validate", "incidents/INC-0001.yaml", cwd=repo)
    assert alone.stdout == ("incidents/INC-0001.yaml:4:6: [unresolved-ref] run 'demo-7b' is in "
                            "runbooks/runs/demo-7b.yaml, which cannot be read as a record; expected a run record "
                            "without errors (tooling validate runbooks/runs/demo-7b.yaml)\n")
    before = snapshot(repo)
    edit = tooling("set", "INC-0001", "title=A title that is long enough", cwd=repo)
    assert edit.returncode == 1 and "run 'demo-7b' is in runbooks/runs/demo-7b.yaml" in edit.stderr
    assert snapshot(repo) == before


def _commands() -> list[str]:
    """Every command of the real parser, read from it (a new command is covered without a list)."""
    from tooling.main import _parser

    action = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return list(action.choices)


@pytest.mark.parametrize("command", _commands())
def test_every_commands_usage_error_begins_as_every_other_error(tmp_path: Path, command: str) -> None:
    """A command's own parser said `tooling report: error:` where every other error says
    `tooling: error:`; it names the command after it now. `--now` is an option of every command,
    checked by the command's parser."""
    result = tooling(command, "--now", "yesterday", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", f"tooling: error: {command}: argument --now: expected a timestamp such as 2026-11-29T12:00:00+00:00 "
               "but received: 'yesterday'\n")
