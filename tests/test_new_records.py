"""Scaffolding records: new-incident (flags, prompts, concurrency), new-postmortem, new-run."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from support import snapshot, tooling

INCIDENT = ["new-incident", "--title", "Rank 17 hung in all-reduce", "--run", "demo-7b",
            "--severity", "sev2", "--symptom", "hang", "--signature", "NCCL WARN Timeout",
            "--node", "node017", "--rank", "17", "--detected-at", "2026-11-29T02:47:00+00:00"]


def test_new_incident_writes_a_commented_valid_file(repo: Path) -> None:
    result = tooling(*INCIDENT, cwd=repo)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        "created incidents/INC-0003.yaml\n"
        "likely repeats (confirm with: tooling set INC-0003 repeat_of=ID):\n"
        "  INC-0002  similar wording (0.57): NCCL timeout in all-reduce on node017\n")
    text = (repo / "incidents" / "INC-0003.yaml").read_text()
    lines = text.splitlines()
    assert lines[0].startswith("# yaml-language-server: $schema=")
    assert lines[0].endswith("tooling/schemas/incident.schema.json")
    schema_ref = lines[0].split("$schema=", 1)[1]
    assert (repo / "incidents" / schema_ref).resolve().is_file()
    assert "# Error signatures copied verbatim from logs" in text
    assert "id: INC-0003\n" in text and "  - NCCL WARN Timeout\n" in text
    assert "# resolved_at:\n" in text  # optional fields are offered, commented out
    check = tooling("validate", "--strict", cwd=repo)
    assert (check.returncode, check.stdout) == (0, "")


def test_new_incident_without_a_terminal_refuses_instead_of_prompting(repo: Path) -> None:
    before = snapshot(repo)
    result = tooling("new-incident", "--title", "Loss went NaN at step 1200", cwd=repo)
    assert result.returncode == 2
    assert result.stderr == ("tooling: error: missing --severity, --symptom (standard input is not "
                             "a terminal, so tooling cannot ask; pass them as options)\n")
    assert snapshot(repo) == before


def test_new_incident_rejects_a_bad_value_and_writes_nothing(repo: Path) -> None:
    before = snapshot(repo)
    args = [a if a != "sev2" else "critical" for a in INCIDENT]
    result = tooling(*args, cwd=repo)
    assert result.returncode == 2
    assert result.stderr == ("tooling: error: --severity: Expected one of: ['sev1', 'sev2', 'sev3', "
                             "'sev4', 'unknown'] but received: 'critical'\n")
    assert snapshot(repo) == before


def test_new_incident_rejects_an_unknown_run(repo: Path) -> None:
    args = [a if a != "demo-7b" else "demo-70b" for a in INCIDENT]
    result = tooling(*args, cwd=repo)
    assert (result.returncode, result.stderr) == (
        2, "tooling: error: --run: Expected one of: ['demo-7b'] but received: 'demo-70b'\n")


def test_new_incident_where_no_run_is_written_yet_says_to_write_one(tmp_path: Path) -> None:
    (tmp_path / "incidents").mkdir()
    result = tooling(*INCIDENT, cwd=tmp_path)
    assert (result.returncode, result.stderr, sorted(tmp_path.rglob("*"))) == (
        2, "tooling: error: --run: no run record in runbooks/runs/ yet but received: 'demo-7b'; expected a run "
           "written first with tooling new-run NAME\n", [tmp_path / "incidents"])


def test_new_incident_rejects_a_timestamp_without_offset(repo: Path) -> None:
    args = [a if not a.startswith("2026-11-29T") else "2026-11-29 02:47" for a in INCIDENT]
    result = tooling(*args, cwd=repo)
    assert (result.returncode, result.stderr) == (
        2, "tooling: error: --detected-at: expected a timestamp with a timezone offset (2026-03-14T02:47:00+00:00), "
           "or as much of a date as is known: 2026-03-14, 2026-03 or 2026 but received: '2026-11-29 02:47'\n")


def test_twenty_concurrent_new_incidents_give_twenty_distinct_valid_files(repo: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-m", "tooling", *INCIDENT[:2], f"Hang number {i} on node017",
                               *INCIDENT[3:]], cwd=repo, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(20)]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 20, outputs
    created = sorted(out.splitlines()[0] for out, _ in outputs)
    assert created == [f"created incidents/INC-{n:04d}.yaml" for n in range(3, 23)]
    titles = {(repo / line.split()[1]).read_text().split("\ntitle: ", 1)[1].split("\n", 1)[0]
              for line in created}
    assert titles == {f"Hang number {i} on node017" for i in range(20)}
    assert not list((repo / "incidents").glob(".*.tmp"))
    check = tooling("validate", "--strict", cwd=repo)
    assert (check.returncode, check.stdout) == (0, "")


def test_new_incident_prompts_on_a_terminal(repo: Path) -> None:
    child = pexpect.spawn(sys.executable, ["-m", "tooling", "new-incident"], cwd=str(repo),
                          encoding="utf-8", timeout=30)
    child.expect_exact("Title (what broke, where, how it showed): ")
    child.sendline("Loss went NaN after the LR warmup change")
    child.expect_exact("Training run [demo-7b] (default: demo-7b): ")
    child.sendline("")
    child.expect_exact("Severity [sev1/sev2/sev3/sev4/unknown]: ")
    child.sendline("urgent")
    child.expect_exact("Expected one of: ['sev1', 'sev2', 'sev3', 'sev4', 'unknown'] but received: 'urgent'")
    child.expect_exact("Severity [sev1/sev2/sev3/sev4/unknown]: ")
    child.sendline("sev2")
    child.expect_exact("Symptom [")
    child.sendline("nan")
    child.expect_exact("(default: unknown): ")
    child.sendline("")
    child.expect_exact("created incidents/INC-0003.yaml")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    text = (repo / "incidents" / "INC-0003.yaml").read_text()
    assert "symptom: nan\n" in text and "layer: unknown\n" in text and "run: demo-7b\n" in text


def test_new_postmortem_and_new_run(repo: Path) -> None:
    now = ["--now", "2026-11-10T09:30:00+01:00"]
    result = tooling(*now, "new-postmortem", "INC-0001", "--author", "carol", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert (result.returncode, result.stdout) == (0, "created incidents/PM-0002.yaml\n")
    text = (repo / "incidents" / "PM-0002.yaml").read_text()
    assert "incidents:\n  - INC-0001\n" in text and "status: draft\n" in text
    assert "duration_minutes: 30" in text and "created: 2026-11-10\n" in text
    result = tooling(*now, "new-run", "llama-13b", "--title", "13B continued pretraining", "--owner", "dana", cwd=repo)
    assert (result.returncode, result.stdout) == (0, "created runbooks/runs/llama-13b.yaml\n")
    assert "updated_at: 2026-11-10T09:30:00+01:00\n" in (repo / "runbooks" / "runs" / "llama-13b.yaml").read_text()
    # INC-0001 was resolved on 3 November: the draft is late from the 18th, by the one clock (the
    # corpus's later records, dated after these clocks, are [clock-skew] warnings: not this test's)
    def late(*clock: str) -> str:
        return "".join(line for line in tooling(*clock, "validate", cwd=repo).stdout.splitlines(keepends=True)
                       if "[clock-skew]" not in line)

    assert (late(*now), late("--now", "2026-11-17T12:00:00+00:00")) == ("", "")
    check = tooling("--now", "2026-11-19T12:00:00+00:00", "validate", cwd=repo)
    assert check.returncode == 0
    assert late("--now", "2026-11-19T12:00:00+00:00") == ("incidents/PM-0002.yaml:20:9: [stale-draft] warning: still a draft 16 days after its "
                            "incidents were resolved; expected it reviewed within 14 days (tooling review --submit, "
                            "then --approve)\n")


@pytest.mark.parametrize("args, code, message", [
    (["new-postmortem", "INC-0404"], 2,
     "INCIDENT-ID: no such incident: 'INC-0404'; expected ids of files in incidents/"),
    (["new-run", "demo-7b"], 1, "runbooks/runs/demo-7b.yaml: a run named 'demo-7b' already exists"),
    (["new-run", "Demo 7B"], 2, "NAME: expected lower-case letters, digits and dashes, such as demo-7b "
                                "but received: 'Demo 7B'"),
    # `tooling set hang ...` would edit the new run instead of the ladder
    (["new-run", "hang"], 2, "NAME: 'hang' is the id of runbooks/ladders/hang.yaml already; expected a name "
                             "no record has"),
    # the file system's limit on a name is met as the schema's limit on an id, the name cut short
    (["new-run", "a" * 300], 2, f"NAME: expected at most 64 characters but received: '{'a' * 60}…'"),
    (["set", "a" * 300, "title=a title"], 2, "expected a record id such as INC-0042, PM-0007, demo-7b, hang, stack "
                                             f"but received: '{'a' * 60}…'"),
    (["validate", f"runbooks/runs/{'a' * 300}.yaml"], 1,
     f"runbooks/runs/{'a' * 106}…: file name too long; expected a name of at most 255 bytes"),
])
def test_new_record_errors(repo: Path, args: list[str], code: int, message: str) -> None:
    before = snapshot(repo)
    result = tooling(*args, cwd=repo)
    assert result.returncode == code
    assert result.stderr.replace(str(repo) + "/", "") == f"tooling: error: {message}\n"
    assert snapshot(repo) == before


def test_new_incident_names_the_earlier_incident_with_the_same_signature(repo: Path) -> None:
    result = tooling("new-incident", "--title", "All ranks stuck in a collective", "--run", "demo-7b",
                     "--severity", "sev2", "--symptom", "hang", "--layer", "nccl",
                     "--signature", "NCCL WARN Timeout at work 77 on node311", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1:] == [
        "likely repeats (confirm with: tooling set INC-0003 repeat_of=ID):",
        "  INC-0002  same failure mode nccl.collective-timeout: NCCL timeout in all-reduce on node017"]


def test_new_incident_names_first_the_earlier_incident_its_title_says_it_repeats(repo: Path) -> None:
    result = tooling("new-incident", "--title", "Stuck again: the same hang", "--run", "demo-7b",
                     "--severity", "sev2", "--symptom", "hang", "--detected-at", "2026-11-29T02:47:00+00:00",
                     cwd=repo)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1:] == [
        "likely repeats (confirm with: tooling set INC-0003 repeat_of=ID):",
        "  INC-0002  the record says it happened before ('again'): NCCL timeout in all-reduce on node017"]


@pytest.mark.parametrize("flag, value, message", [
    ("--rank", "99999999999999999999999", "--rank: integer '99999999999999999999999' is too large; expected a "
                                          "whole number of at most 9,223,372,036,854,775,807"),
    ("--detected-at", "2999-01-01T00:00:00+00:00", "--detected-at: '2999-01-01T00:00:00+00:00' is outside the "
                                                    "years 1990-2099; expected a date in the life of a training run"),
])
def test_new_incident_refuses_what_validate_would_refuse_and_writes_nothing(repo: Path, flag: str, value: str,
                                                                            message: str) -> None:
    before = snapshot(repo)
    result = tooling(*INCIDENT, flag, value, cwd=repo)  # the later flag wins (--detected-at) or adds (--rank)
    assert (result.returncode, result.stderr) == (2, f"tooling: error: {message}\n")
    assert snapshot(repo) == before


def test_new_incident_refuses_a_record_over_the_size_limit(repo: Path) -> None:
    before = snapshot(repo)
    huge = [arg for i in range(9) for arg in ("--signature", f"{i} " + "x" * 120_000)]
    result = tooling(*INCIDENT, *huge, cwd=repo)
    assert (result.returncode, result.stderr) == (
        1, "tooling: error: incidents: no incident created, it would not validate: [file-too-large] file is larger "
           "than 1,048,576 bytes; expected a record of at most 1 MiB\n")
    assert snapshot(repo) == before


@pytest.mark.parametrize("make, what", [
    (lambda p: p.write_text("not a folder\n"), "a file"),
    (lambda p: p.symlink_to("gone"), "a symbolic link to gone, which does not exist"),
    (lambda p: (p.symlink_to(p.parent / "loop"), (p.parent / "loop").symlink_to(p)),
     "a symbolic link that leads round in a loop"),
])
def test_new_incident_says_what_stands_where_the_incidents_folder_should_be(repo: Path, make, what: str) -> None:
    shutil.rmtree(repo / "incidents")
    make(repo / "incidents")
    before = snapshot(repo)
    result = tooling("new-incident", "--title", "Scheduler lost the node", "--run", "demo-7b", "--severity",
                     "sev3", "--symptom", "infra", cwd=repo)
    assert (result.returncode, result.stderr) == (
        1, f"tooling: error: incidents: {what}; expected the folder the records go in (move it away or make "
           "it a folder)\n")
    assert snapshot(repo) == before


def test_new_run_names_the_file_that_stands_where_a_parent_folder_should_be(repo: Path) -> None:
    shutil.rmtree(repo / "runbooks")
    (repo / "runbooks").write_text("not a folder\n")
    result = tooling("new-run", "llama-13b", cwd=repo)
    assert (result.returncode, result.stderr) == (
        1, "tooling: error: runbooks: a file; expected a folder holding runbooks/runs/, the folder the records "
           "go in (move it away or make it a folder)\n")
    assert (repo / "runbooks").read_text() == "not a folder\n"


def test_a_run_named_shorter_than_a_title_may_be_gets_a_title_that_says_it_is_a_run(tmp_path: Path) -> None:
    # its title was its name, and "r1" was refused for a --title nobody gave
    result = tooling("new-run", "r1", "--owner", "dana", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, "")
    assert "\ntitle: Run r1\n" in (tmp_path / "runbooks/runs/r1.yaml").read_text()
    assert tooling("validate", "--strict", cwd=tmp_path).returncode == 0
