"""Editing records through tooling keeps every comment byte-for-byte and never half-writes."""
from __future__ import annotations

import difflib
from datetime import datetime, timezone
from pathlib import Path

import pytest

from support import snapshot, tooling
from tooling.records.load import parse_text
from tooling.records.roundtrip import dump_field
from tooling.rules.validate import repository_records
from tooling.writers import edit

HAND_WRITTEN = """\
# yaml-language-server: $schema=../tooling/schemas/incident.schema.json
# Filed from the pager at 03:14; details below are from the first triage pass.
kind: incident
id: INC-0003
title: "Xid 79 on node042: GPU fell off the bus"   # keep the Xid in the title for search
run: demo-7b
status: investigating  # waiting for the vendor
severity: sev1
symptom: crash
layer: gpu-hardware
signatures:
    -   Xid 79          # verbatim from dmesg
    -   'NCCL WARN Timeout'
detected_at: 2026-11-02T03:14:00+00:00
timeline:
    -   at: 2026-11-02T03:14:00+00:00
        event: pager fired on stalled throughput
    # the restart below used the spare node
    -   at: 2026-11-02T04:00:00+00:00
        event: restarted from step 41000 on spare node101
impact:
    gpu_hours_lost: 64     # 64 GPUs idle for an hour
    steps_lost: 250
root_cause: ''
"""


def _changed_lines(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_set_keeps_comments_and_layout_byte_for_byte(repo: Path) -> None:
    path = repo / "incidents" / "INC-0003.yaml"
    path.write_text(HAND_WRITTEN)
    result = tooling("set", "INC-0003", "status=resolved", "resolved_at=2026-11-03T10:00:00+00:00",
                     "impact.gpu_hours_lost=96", cwd=repo)
    assert (result.returncode, result.stdout, result.stderr) == (0, "updated incidents/INC-0003.yaml\n", "")
    after = path.read_text()
    # ruamel keeps each end-of-line comment at its column, so only the values change.
    assert _changed_lines(HAND_WRITTEN, after) == [
        "-status: investigating  # waiting for the vendor",
        "+status: resolved       # waiting for the vendor",
        "+resolved_at: 2026-11-03T10:00:00+00:00",
        "-    gpu_hours_lost: 64     # 64 GPUs idle for an hour",
        "+    gpu_hours_lost: 96     # 64 GPUs idle for an hour",
    ]
    comments = [line[line.index("#"):] for line in HAND_WRITTEN.splitlines() if "#" in line]
    assert [line[line.index("#"):] for line in after.splitlines() if "#" in line] == comments
    assert tooling("validate", "--strict", cwd=repo).returncode == 0


def test_set_refuses_an_edit_that_breaks_the_record(repo: Path) -> None:
    path = repo / "incidents" / "INC-0003.yaml"
    path.write_text(HAND_WRITTEN)
    before = snapshot(repo)
    result = tooling("set", "INC-0003", "status=resolved", cwd=repo)
    assert result.returncode == 1
    assert result.stderr == ("tooling: error: incidents/INC-0003.yaml:7:9: [resolved-without-time] status is "
                             "'resolved' but resolved_at is missing; expected resolved_at "
                             "(not changed: the edit would make the record invalid)\n")
    result = tooling("set", "INC-0003", "severity=critical", cwd=repo)
    assert result.stderr == ("tooling: error: incidents/INC-0003.yaml:8:11: [invalid-value] Expected one of: "
                             "['sev1', 'sev2', 'sev3', 'sev4', 'unknown'] but received: 'critical' "
                             "(not changed: the edit would make the record invalid)\n")
    assert snapshot(repo) == before


def test_set_on_a_run_page_stamps_updated_at_with_the_one_clock(repo: Path) -> None:
    result = tooling("--now", "2026-11-30T08:15:00+09:00", "set", "demo-7b", "state=degraded", cwd=repo)
    assert (result.returncode, result.stderr) == (0, "")
    text = (repo / "runbooks" / "runs" / "demo-7b.yaml").read_text()
    assert "state: degraded\n" in text
    assert "updated_at: 2026-11-30T08:15:00+09:00\n" in text


def test_a_tab_in_a_value_is_stored_as_an_escape(repo: Path) -> None:
    """A pasted log line has tabs. The character rules allow a tab in a value (only a tab in the
    file's text is refused, as indentation), new-incident stores one as "\\t": set did not read it
    ('while scanning for the next token')."""
    path = repo / "incidents" / "INC-0001.yaml"
    result = tooling("set", "INC-0001", "title=Loss\twent NaN at step 5", "signatures=[NCCL WARN\tTimeout]", cwd=repo)
    assert (result.returncode, result.stderr) == (0, "")
    text = path.read_text()
    assert 'title: "Loss\\twent NaN at step 5"\n' in text and '  - "NCCL WARN\\tTimeout"\n' in text
    assert "\t" not in text
    assert tooling("validate", "--strict", cwd=repo).returncode == 0


def test_a_value_that_is_not_yaml_says_what_and_where(repo: Path) -> None:
    before = snapshot(repo)
    result = tooling("set", "INC-0001", "tags=[a\tb", cwd=repo)
    assert (result.returncode, result.stderr) == (2, "tooling: error: 'tags': expected ',' or ']', but got "
                                                     "'<scalar>' at character 4; expected a YAML value\n")
    result = tooling("set", "INC-0001", "tags=[a, b", cwd=repo)
    assert (result.returncode, result.stderr) == (2, "tooling: error: 'tags': expected ',' or ']', but got "
                                                     "'<stream end>' at character 6; expected a YAML value\n")
    assert snapshot(repo) == before


def test_set_unknown_record_and_bad_assignment(repo: Path) -> None:
    result = tooling("set", "INC-0404", "status=open", cwd=repo)
    assert (result.returncode, result.stderr) == (1, "tooling: error: no record with id 'INC-0404' in incidents/; "
                                                  "expected the id of an existing incident record\n")
    result = tooling("set", "demo-99b", "state=running", cwd=repo)
    assert (result.returncode, result.stderr) == (
        1, "tooling: error: no record with id 'demo-99b' in runbooks/runs/, runbooks/ladders/ or runbooks/; "
           "expected the id of an existing run, ladder or stack record\n")
    result = tooling("set", "INC-0001", "status", cwd=repo)
    assert (result.returncode, result.stderr) == (2, "tooling: error: expected FIELD=VALUE but received: 'status'\n")


def test_a_file_that_keeps_changing_is_named_relative(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A person's editor saving during every attempt: the edit gives up, naming the record as validate does."""
    path = repo / "incidents" / "INC-0002.yaml"
    real = edit.replace_file

    def editor_saves_first(target: Path, text: str, *, still: object = None) -> bool:
        target.write_text(target.read_text() + "# saved by an editor\n")  # between our read and our swap
        return real(target, text, still=still)  # type: ignore[arg-type]

    monkeypatch.setattr(edit, "replace_file", editor_saves_first)
    monkeypatch.chdir(repo)
    with pytest.raises(edit.StillChanging) as raised:
        edit.set_fields(path, [edit.parse_assignment("title=mine, not the editor's")], universe=repository_records(repo),
                        now=datetime(2026, 11, 28, tzinfo=timezone.utc))
    assert str(raised.value) == (f"incidents/INC-0002.yaml: not changed: the file changed {edit.ATTEMPTS} times "
                                 "while it was being edited; expected it to hold still (run the command again)")
    assert path.read_text().count("# saved by an editor\n") == edit.ATTEMPTS and "mine, not" not in path.read_text()


@pytest.mark.parametrize("text", ["0    " + "[x](y)" * 1000, "a  b " * 2000, "x" * 9000 + "   y"])
def test_a_long_value_with_a_run_of_spaces_is_written_as_it_is_read(text: str) -> None:
    """ruamel folds a word longer than its width onto a line of its own after the spaces before
    it, and a fold keeps one space of the run: found by the record property test."""
    loaded = parse_text("pm.yaml", dump_field("lessons", [text]))
    assert loaded.findings == [] and loaded.data["lessons"] == [text]


@pytest.mark.parametrize("value", ["?oWoL", ":y", "a:", "x:[y", "x:}", "a:b", "x?y", "2026-11-28T12:00:00+00:00"])
def test_a_value_in_a_flow_collection_is_written_as_the_loader_reads_it(value: str) -> None:
    """ruamel writes some values plain in flow style that libyaml, the records' loader, does not
    read (a leading ? or :, a : at the end or before a flow indicator): found by the record
    property test. The others stay plain."""
    raw = f'debugging=[{{"next_step": "{value}", "who": "x"}}]'
    text = edit.edited_text("kind: run\nid: r\ndebugging: []\n", [edit.parse_assignment(raw)],
                            now=datetime(2026, 12, 6, tzinfo=timezone.utc))
    loaded = parse_text("r.yaml", text)
    assert loaded.findings == [] and loaded.data["debugging"] == [{"next_step": value, "who": "x"}]
