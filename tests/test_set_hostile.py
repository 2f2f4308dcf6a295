"""`tooling set` against concurrent writers, path-like ids, symlinks and records with warnings."""
from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest
from support import snapshot, tooling
from tooling.main import main
from tooling.records.load import load_file

# ten different fields of one incident, each set by its own writer
EDITS = [
    ("status", "investigating"), ("severity", "sev3"), ("symptom", "crash"), ("layer", "nccl"),
    ("root_cause", "a flaky switch port"), ("impact.gpu_hours_lost", 5), ("impact.steps_lost", 7),
    ("title", "A title set by writer seven"), ("reported_by", "zed"),
    ("mitigated_at", "2026-11-29T05:00:00+00:00"),
]


def _fields(path: Path) -> dict:
    return load_file(str(path)).data  # the project's loader: times stay as written


def _assert_all_landed(path: Path) -> None:
    data = _fields(path)
    for field, value in EDITS:
        node = data
        *parents, last = field.split(".")
        for key in parents:
            node = node[key]
        got = node[last]
        assert str(got) == str(value), f"{field}: lost ({got!r} instead of {value!r})"


def test_ten_concurrent_sets_through_the_real_executable_all_land(repo: Path) -> None:
    import subprocess
    import sys
    processes = [subprocess.Popen([sys.executable, "-m", "tooling", "set", "INC-0002", f"{field}={value}"],
                                  cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for field, value in EDITS]
    outputs = [p.communicate(timeout=120) for p in processes]
    assert [p.returncode for p in processes] == [0] * len(EDITS), outputs
    _assert_all_landed(repo / "incidents" / "INC-0002.yaml")
    assert tooling("validate", "--strict", cwd=repo).returncode == 0


def _set_in_child(root: str, field: str, value: object) -> int:
    os.chdir(root)
    return main(["set", "INC-0002", f"{field}={value}"])


@pytest.mark.slow
def test_twenty_rounds_of_ten_concurrent_sets_lose_nothing(repo: Path) -> None:
    path = repo / "incidents" / "INC-0002.yaml"
    original = path.read_text()
    context = multiprocessing.get_context("fork")  # main() in a fresh process, without interpreter start-up
    for round_number in range(20):
        path.write_text(original)
        with context.Pool(len(EDITS)) as pool:
            codes = pool.starmap(_set_in_child, [(str(repo), f, v) for f, v in EDITS])
        assert codes == [0] * len(EDITS), f"round {round_number}"
        _assert_all_landed(path)


@pytest.mark.parametrize("record_id", ["../../elsewhere/INC-0099", "/tmp/INC-0099", "INC-0099/../INC-0001",
                                       "incidents/INC-0001", ".", ""])
def test_path_like_ids_never_reach_the_file_system(repo: Path, record_id: str) -> None:
    before = snapshot(repo)
    result = tooling("set", record_id, "title=hacked title", cwd=repo)
    assert result.returncode == 2
    assert result.stderr == ("tooling: error: expected a record id such as INC-0042, PM-0007, demo-7b, hang, "
                             f"stack but received: {record_id!r}\n")
    assert snapshot(repo) == before


def test_a_symlink_out_of_the_repository_is_refused(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text((repo / "incidents" / "INC-0002.yaml").read_text().replace("INC-0002", "INC-0050"))
    link = repo / "incidents" / "INC-0050.yaml"
    link.symlink_to(outside)
    text = outside.read_text()
    result = tooling("set", "INC-0050", "title=changed through the link", cwd=repo)
    assert result.returncode == 1
    assert result.stderr == ("tooling: error: incidents/INC-0050.yaml: a symbolic link to a file outside the repository; "
                             "expected the record itself (tooling does not edit files outside the repository)\n")
    assert outside.read_text() == text
    check = tooling("validate", cwd=repo)
    assert "incidents/INC-0050.yaml:1:1: [outside-repository] symbolic link to a file outside the repository" \
        in check.stdout
    assert "INC-0050\n" not in check.stdout  # nothing of the target's content is echoed


def test_a_symlink_to_nothing_is_named_as_validate_names_it(repo: Path) -> None:
    (repo / "incidents" / "INC-0051.yaml").symlink_to("/nowhere/INC-0051.yaml")
    before = snapshot(repo)
    result = tooling("set", "INC-0051", "status=resolved", cwd=repo)
    assert (result.returncode, result.stderr) == (
        1, "tooling: error: incidents/INC-0051.yaml:1:1: [unreadable] cannot read file: a symbolic link to nothing "
           "(its target does not exist); expected the record itself or a link to it\n")
    assert snapshot(repo) == before


def test_a_symlink_inside_the_repository_is_edited_through(repo: Path) -> None:
    (repo / "archive").mkdir()
    target = repo / "archive" / "INC-0050.yaml"
    target.write_text((repo / "incidents" / "INC-0002.yaml").read_text().replace("INC-0002", "INC-0050"))
    link = repo / "incidents" / "INC-0050.yaml"
    link.symlink_to(Path("..") / "archive" / "INC-0050.yaml")
    result = tooling("set", "INC-0050", "title=changed through the link", cwd=repo)
    assert (result.returncode, result.stderr) == (0, "")
    assert link.is_symlink() and os.readlink(link) == "../archive/INC-0050.yaml"
    assert "title: changed through the link\n" in target.read_text()


AT = "incidents/INC-0002.yaml"


@pytest.mark.parametrize("assignment, message", [
    ("id=INC-0001", f"{AT}:2:5: [id-mismatch] id 'INC-0001' does not match the file name; expected 'INC-0002'; "
                    f"{AT}:2:5: [duplicate-id] id 'INC-0001' is also used by incidents/INC-0001.yaml; "
                    "expected a unique id"),
    ("resolved_at=2026-11-01T00:00:00+00:00",
     f"{AT}:1:1: [time-order] resolved_at 2026-11-01T00:00:00+00:00 is before detected_at "
     "2026-11-20T01:00:00+00:00; expected it at or after"),
    ("run=demo-99b", f"{AT}:4:6: [unresolved-ref] run 'demo-99b' does not exist; "
                     "expected the id of an existing run record"),
])
def test_cross_record_rules_apply_even_to_a_record_with_warnings(repo: Path, assignment: str, message: str) -> None:
    path = repo / "incidents" / "INC-0002.yaml"
    path.write_text(path.read_text() + "owner_team: infra\n")  # a warning the record already carries
    before = snapshot(repo)
    result = tooling("set", "INC-0002", assignment, cwd=repo)
    assert (result.returncode, result.stderr) == (
        1, f"tooling: error: {message} (not changed: the edit would make the record invalid)\n")
    assert snapshot(repo) == before


def test_a_yml_record_is_found_by_every_command(repo: Path) -> None:
    old = repo / "incidents" / "INC-0001.yaml"
    old.rename(old.with_suffix(".yml"))
    assert tooling("set", "INC-0001", "root_cause=a cable", cwd=repo).returncode == 0
    result = tooling("new-postmortem", "INC-0001", "--author", "carol", cwd=repo)
    assert (result.returncode, result.stderr) == (0, "")


def test_an_edit_that_would_take_the_record_over_one_mib_is_refused(repo: Path) -> None:
    path = repo / "incidents" / "INC-0002.yaml"
    path.write_text(path.read_text() + "notes: " + "n" * 1_000_000 + "\n")  # valid: just under the limit
    assert tooling("validate", cwd=repo).returncode == 0
    before = snapshot(repo)
    result = tooling("set", "INC-0002", "root_cause=" + "r" * 100_000, cwd=repo)
    assert (result.returncode, result.stderr) == (
        1, "tooling: error: incidents/INC-0002.yaml:1:1: [file-too-large] file is larger than 1,048,576 bytes; "
           "expected a record of at most 1 MiB (not changed: the edit would make the record invalid)\n")
    assert snapshot(repo) == before


def test_set_refuses_only_what_validate_calls_an_error(repo: Path) -> None:
    # defect 7 of issue 21: a symptom no ladder serves is a warning for validate and new-incident,
    # and set refused it
    path = repo / "incidents" / "INC-0001.yaml"
    result = tooling("set", "INC-0001", "symptom=plateau", cwd=repo)
    assert (result.returncode, result.stdout, result.stderr) == (
        0, "updated incidents/INC-0001.yaml\n",
        "tooling: warning: incidents/INC-0001.yaml:7:10: [ladder-missing] symptom 'plateau' has 1 incident but no "
        "ladder; expected runbooks/ladders/plateau.yaml, or 'plateau' under also_for of the closest ladder\n")
    assert "symptom: plateau\n" in path.read_text()
    validated = tooling("validate", cwd=repo)
    assert (validated.returncode, validated.stdout) == (
        0, "incidents/INC-0001.yaml:7:10: [ladder-missing] warning: symptom 'plateau' has 1 incident but no "
           "ladder; expected runbooks/ladders/plateau.yaml, or 'plateau' under also_for of the closest ladder\n")


def test_set_strict_refuses_the_warnings_an_edit_brings_as_validate_strict_would(repo: Path) -> None:
    before = snapshot(repo)
    result = tooling("set", "--strict", "INC-0001", "symptom=plateau", cwd=repo)
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "", "tooling: error: incidents/INC-0001.yaml:7:10: [ladder-missing] symptom 'plateau' has 1 incident but "
               "no ladder; expected runbooks/ladders/plateau.yaml, or 'plateau' under also_for of the closest ladder "
               "(not changed: the edit would make the record invalid)\n")
    assert snapshot(repo) == before


@pytest.mark.parametrize("assignment, message", [
    ("stauts=resolved", "unknown field 'stauts', did you mean 'status'?"),
    ("impact.gpu_hourz=3", "unknown field 'impact.gpu_hourz', did you mean 'impact.gpu_hours_lost'?"),
    ("zzz=1", "unknown field 'zzz'; expected a field of the incident schema"),
])
def test_a_field_name_the_schema_does_not_know_is_a_typo_on_the_command_line(
        repo: Path, assignment: str, message: str) -> None:
    # not the record's unknown-field warning (a file may carry fields for other tools): the
    # command line names a field to set, and this names none
    before = snapshot(repo)
    result = tooling("set", "INC-0002", assignment, cwd=repo)
    assert (result.returncode, result.stderr) == (2, f"tooling: error: {message} (not changed)\n")
    assert snapshot(repo) == before
