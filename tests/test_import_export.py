"""tooling import (a team's logbook in: CSV, JSONL, markdown; every guess named) and tooling export."""
from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import jsonschema
import pytest

from support import CORPUS, snapshot, tooling
from tooling.commands.import_history import import_command
from tooling.errors import UserError
from tooling.intake import importing
from tooling.intake.dates import DateRules, Reading, read_date
from tooling.intake.fields import USUAL_NAMES, mappable
from tooling.intake.mapping import schema as mapping_schema
from tooling.intake.rows import REFERENCES
from tooling.intake.values import Context, convert
from tooling.records.load import load_file

IMPORT = CORPUS / "import"
NOW = "2026-11-29T12:00:00+00:00"
RUN = """\
kind: run
id: demo-7b
title: Demo 7B pretraining
owner: alice
state: finished
updated_at: 2026-11-28T09:00:00+00:00
"""


@pytest.fixture
def history(tmp_path: Path) -> Path:
    """A repository with one run and no incidents yet, holding the sample logbooks."""
    root = tmp_path / "history"
    (root / "runbooks" / "runs").mkdir(parents=True)
    (root / "runbooks" / "runs" / "demo-7b.yaml").write_text(RUN)
    (root / "mkdocs.yml").write_text("site_name: test\n")
    for sample in IMPORT.iterdir():
        shutil.copy(sample, root / sample.name)
    return root


def _import(root: Path, *args: str):
    return tooling("--now", NOW, "import", *args, cwd=root)


def _incidents(root: Path) -> dict[str, dict]:
    """The records as the validator reads them (times stay text)."""
    return {p.stem: load_file(str(p)).data for p in sorted((root / "incidents").glob("INC-*.yaml"))}


def _valid(root: Path) -> None:
    check = tooling("validate", "--strict", cwd=root)
    assert (check.returncode, check.stdout) == (0, ""), check.stdout


LOGBOOK = ("ops-logbook.csv", "--mapping", "ops-logbook.mapping.yaml")
SUMMARY = "ops-logbook.csv: 24 rows: {done}, {before} imported before; {guesses} guesses, {unmapped} unmapped values\n"


def test_two_imports_at_once_file_each_row_once(history: Path) -> None:
    """Each import plans from the markers of the rows imported before: two at once both planned
    before either wrote, and filed every row twice (48 incidents for 24 rows)."""
    command = [sys.executable, "-m", "tooling", "--now", NOW, "import", *LOGBOOK]
    both = [subprocess.Popen(command, cwd=history, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    summaries = sorted(p.communicate(timeout=300)[1].splitlines()[-1] for p in both)
    assert [p.returncode for p in both] == [0, 0]
    assert summaries == [SUMMARY.format(done="0 created", before=24, guesses=0, unmapped=0).strip(),
                         SUMMARY.format(done="24 created (INC-0001..INC-0024)", before=0, guesses=106,
                                        unmapped=4).strip()]
    assert len(_incidents(history)) == 24
    _valid(history)


def test_an_import_that_cannot_get_its_turn_says_so_and_writes_nothing(history: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importing, "WAIT_SECONDS", 0.2)
    before = snapshot(history)
    other = os.open(history, os.O_RDONLY)
    try:
        fcntl.flock(other, fcntl.LOCK_EX)  # an import in another process holds the repository
        with pytest.raises(UserError) as refused:
            import_command(history / LOGBOOK[0], root=history, now=datetime.fromisoformat(NOW),
                           mapping=history / LOGBOOK[2], fmt=None, dry_run=False)
    finally:
        os.close(other)
    assert str(refused.value) == ("another import into this repository is still running after 0.2 s; expected one "
                                  "import at a time (run it again when that one has finished)")
    assert snapshot(history) == before


def test_csv_logbook_every_row_becomes_a_valid_record_and_the_report_names_each_guess(history: Path) -> None:
    result = _import(history, *LOGBOOK)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (IMPORT / "ops-logbook.report.txt").read_text()
    assert result.stderr == SUMMARY.format(done="24 created (INC-0001..INC-0024)", before=0, guesses=106, unmapped=4)
    # the cases, one line each: partial dates, their layer names, unknown layers,
    # paraphrase-only rows, a pasted Xid line, 'happened 5 times', a resolved row without a date
    for line in (
        "ops-logbook.csv:5: [guess] detected_at: 2022 (only the year could be read from 'Q3 2022')",
        "ops-logbook.csv:2: [guess] failure_mode: gpu.fell-off-bus (recognised from the log line "
        "'NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off' by Xid 79)",
        "ops-logbook.csv:3: [guess] failure_mode: training.loss-spike-recovered (the only failure mode the "
        "text suggests)",
        "ops-logbook.csv:6: [guess] occurrences: 5 (the text says 'happened 5 times')",
        "ops-logbook.csv:8: [unmapped] layer: 'Network?' (column 'Area': not a layer of the schema and not in "
        "values.layer; kept in notes)",
        "ops-logbook.csv:8: [guess] layer: unknown (the row gives no layer that maps)",
        "ops-logbook.csv:3: [guess] resolved_at: 2022-03 (resolved without a resolution date: the date it was "
        "detected, without a time, so no time to resolve is claimed)",
        "ops-logbook.csv:2: [guess] detected_at: 2022-03-02T14:10:00+00:00 (no time zone given; taken as UTC)",
    ):
        assert line + "\n" in result.stdout
    _valid(history)
    records = _incidents(history)
    assert len(records) == 24
    spike, ecc, straggler, kernel, oom = (records[f"INC-00{n}"] for n in ("02", "05", "07", "13", "14"))
    assert (spike["detected_at"], spike["resolved_at"], spike["layer"], spike["symptom"], spike["severity"]) == (
        "2022-03", "2022-03", "training-dynamics", "loss-spike", "sev3")
    assert (ecc["occurrences"], ecc["scope"], ecc["cluster"], ecc["failure_mode"]) == (
        5, "cluster", "rsc-1", "gpu.hbm-ecc")
    assert re.fullmatch(r'Slow steps on a few ranks, straggler node suspected\n\nNot mapped on import: Area: '
                        r'"Network\?"\n\nimported from ops-logbook.csv id "R-007", content [0-9a-f]{16}',
                        straggler["notes"])
    assert (straggler["nodes"], straggler["impact"]) == (["node031", "node032"], {"wall_hours_lost": 0.75})
    assert (kernel["scope"], kernel["cluster"], "run" in kernel) == ("cluster", "rsc-1", False)
    assert oom["signatures"] == ["torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
                                 "RuntimeError: CUDA error: out of memory"]
    assert (oom["detected_at"], oom["resolved_at"]) == ("2022-09-12T10:00:00+02:00", "2022-09-12T10:40:00+02:00")
    assert records["INC-0001"]["links"] == [{"title": "Ticket", "url": "https://tickets.example.org/OPS-101"}]


def test_dry_run_prints_the_same_report_and_writes_nothing(history: Path) -> None:
    before = snapshot(history)
    result = _import(history, *LOGBOOK, "--dry-run")
    assert result.returncode == 0, result.stderr
    expected = [ln for ln in (IMPORT / "ops-logbook.report.txt").read_text().splitlines(keepends=True)
                if "[created]" not in ln]
    assert result.stdout == "".join(expected)
    assert result.stderr == SUMMARY.format(done="24 would be created (dry run: nothing was written)", before=0,
                                           guesses=106, unmapped=4)
    assert snapshot(history) == before


def test_a_rerun_imports_nothing_new_and_says_which_record_each_row_became(history: Path) -> None:
    assert _import(history, *LOGBOOK).returncode == 0
    before = snapshot(history)
    again = _import(history, *LOGBOOK)
    assert again.returncode == 0, again.stderr
    lines = again.stdout.splitlines()
    assert lines[0] == ("ops-logbook.csv:1: [ignored] column 'Owner' (feeds no field; name it under columns: "
                        "in a mapping to import it)")
    assert lines[1] == 'ops-logbook.csv:2: [skipped] id "R-001" (imported before as INC-0001)'
    assert lines[-1] == 'ops-logbook.csv:27: [skipped] id "R-024" (imported before as INC-0024)'
    assert sum("imported before as" in ln for ln in lines) == 24 and not any("[created]" in ln for ln in lines)
    assert again.stderr == SUMMARY.format(done="0 created", before=24, guesses=0, unmapped=0)
    assert snapshot(history) == before


def test_a_particular_failure_the_text_names_narrows_the_one_its_log_line_shows(history: Path) -> None:
    row = {"description": "NCCL broke mid-run: the IB link on node7 flapped", "detected_at": "2024-05",
           "cluster": "c1", "signatures": ["ncclRemoteError: A call failed possibly due to a network error or a "
                                           "remote process exiting prematurely."]}
    (history / "flap.jsonl").write_text(json.dumps(row) + "\n")
    result = _import(history, "flap.jsonl", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:2] == [
        "flap.jsonl:1: [guess] failure_mode: network.link-flap (the particular failure of nccl.remote-error the text "
        "names)",
        "flap.jsonl:1: [guess] symptom: slowdown (the symptom of failure mode network.link-flap)"]


def test_a_jsonl_history_imports_with_columns_named_like_fields(history: Path) -> None:
    result = _import(history, "history.jsonl")
    assert result.returncode == 0, result.stderr
    assert result.stdout == """\
history.jsonl:1: [guess] failure_mode: gpu.hbm-ecc (recognised from the log line 'NVRM: Xid (PCI:0000:3b:00): 48, pid=77, DBE (double bit erro' by Xid 48)
history.jsonl:1: [guess] symptom: crash (the symptom of failure mode gpu.hbm-ecc)
history.jsonl:1: [guess] layer: gpu-hardware (the layer of failure mode gpu.hbm-ecc)
history.jsonl:1: [created] INC-0001 (incidents/INC-0001.yaml)
history.jsonl:2: [guess] failure_mode: training.loss-spike-recovered (the only failure mode the text suggests)
history.jsonl:2: [guess] severity: unknown (the row gives no severity that maps)
history.jsonl:2: [guess] status: open (no status and no resolution date; set defaults.status: resolved in the mapping if the logbook holds closed incidents)
history.jsonl:2: [created] INC-0002 (incidents/INC-0002.yaml)
history.jsonl:4: [guess] symptom: crash (the symptom of every failure mode the text suggests)
history.jsonl:4: [guess] layer: unknown (the row gives no layer that maps)
history.jsonl:4: [guess] severity: unknown (the row gives no severity that maps)
history.jsonl:4: [guess] status: open (no status and no resolution date; set defaults.status: resolved in the mapping if the logbook holds closed incidents)
history.jsonl:4: [guess] title: Preempted by a maintenance reservation, lost the last 2 hours (the first words of the description)
history.jsonl:4: [created] INC-0003 (incidents/INC-0003.yaml)
"""
    _valid(history)
    ecc, spike, preempted = _incidents(history).values()
    assert (ecc["detected_at"], ecc["impact"], ecc["severity"]) == (
        "2021-11-02T03:14:00Z", {"gpu_hours_lost": 192}, "sev1")
    assert (spike["symptom"], spike["layer"], spike["occurrences"]) == ("loss-spike", "training-dynamics", 3)
    assert (preempted["scope"], preempted["cluster"], preempted["tags"]) == (
        "cluster", "rsc-1", ["scheduler", "preemption"])
    assert preempted["links"] == [{"title": "reservation notice", "url": "https://wiki.example.org/maint/2022-01"}]


def test_a_jsonl_line_that_is_not_an_object_stops_the_import_with_every_bad_line_located(history: Path) -> None:
    before = snapshot(history)
    result = _import(history, "broken.jsonl")
    assert result.returncode == 1
    assert result.stderr == (
        "tooling: error: broken.jsonl:2:27: Expecting property name enclosed in double quotes; "
        "expected one JSON object per line\n"
        "broken.jsonl:3:1: a JSON list; expected one JSON object per line\n"
        "(nothing was imported)\n")
    assert snapshot(history) == before


def test_a_markdown_logbook_table_imports_with_escaped_pipes_and_line_breaks(history: Path) -> None:
    result = _import(history, "README-logbook.md", "--mapping", "README-logbook.mapping.yaml")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:3] == [
        "README-logbook.md:13: [guess] failure_mode: nccl.collective-timeout (recognised from the log line "
        "'NCCL WARN Timeout at work 8812' by 'NCCL WARN.{0,80}Timeout')",
        "README-logbook.md:13: [guess] symptom: hang (the symptom of failure mode nccl.collective-timeout)",
        "README-logbook.md:13: [guess] severity: unknown (the row gives no severity that maps)",
    ]
    assert "README-logbook.md:15: [guess] failure_mode: storage.quota (recognised from the log line " \
           "'OSError: [Errno 122] Disk quota exceeded' by errno 122)\n" in result.stdout
    assert "README-logbook.md:16: [created] INC-0004 (incidents/INC-0004.yaml)\n" in result.stdout
    _valid(history)
    timeout, blowup, quota, sdc = _incidents(history).values()
    assert (timeout["signatures"], timeout["status"], timeout["resolved_at"]) == (
        ["NCCL WARN Timeout at work 8812"], "resolved", "2023-03-01")  # defaults.status: resolved
    assert (blowup["layer"], blowup["failure_mode"]) == ("training-dynamics", "training.divergence")
    assert quota["title"] == "Checkpoint writes failed | quota on /ckpt"
    assert (sdc["title"], sdc["layer"], sdc["impact"]) == (
        "GPU 5 on node060 gave wrong numbers swapped the board", "unknown", {"wall_hours_lost": 0.5})


def test_a_semicolon_csv_without_a_mapping_maps_columns_named_like_fields(history: Path) -> None:
    (history / "plain.csv").write_text(
        "Title;Detected at;Run;Layer;Severity;Status;Resolved at\n"
        "Rank 3 stuck in all-gather;2024-05-02T10:00:00+00:00;demo-7b;NCCL;SEV-2;Resolved;2024-05-02T12:00:00+00:00\n"
        "Tokenizer shard unreadable;2024-05-09;demo-7b;Data;sev3;open;\n")
    result = _import(history, "plain.csv")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "plain.csv:2: [guess] failure_mode: nccl.collective-timeout (the only failure mode the text suggests)\n"
        "plain.csv:2: [guess] symptom: hang (the symptom of failure mode nccl.collective-timeout)\n"
        "plain.csv:2: [created] INC-0001 (incidents/INC-0001.yaml)\n"
        "plain.csv:3: [guess] symptom: other (nothing in the row says how it showed)\n"
        "plain.csv:3: [created] INC-0002 (incidents/INC-0002.yaml)\n")
    hang, shard = _incidents(history).values()
    assert (hang["layer"], hang["severity"], hang["status"]) == ("nccl", "sev2", "resolved")
    assert (shard["layer"], shard["status"], "resolved_at" in shard) == ("data", "open", False)
    _valid(history)


def test_a_spreadsheet_with_usual_column_names_imports_without_a_mapping_and_says_which_it_read(
        history: Path) -> None:
    (history / "sheet.csv").write_text(
        "Date,Summary,Component,Host,Job,Downtime (h),Date resolved,When,Owner\n"
        "2024-05-02,Rank 3 stuck in all-gather on node07,NCCL,node07,demo-7b,3.5,2024-05-03,x,dana\n")
    result = _import(history, "sheet.csv")
    assert result.returncode == 0, result.stderr
    why = "a usual name for it; name the column under columns: in a mapping to say otherwise"
    assert result.stdout.splitlines()[:8] == [
        "sheet.csv:1: [ignored] column 'When' (feeds no field; name it under columns: in a mapping to import it)",
        "sheet.csv:1: [ignored] column 'Owner' (feeds no field; name it under columns: in a mapping to import it)",
        f"sheet.csv:1: [guess] column 'Date': detected_at ({why})",
        f"sheet.csv:1: [guess] column 'Summary': title ({why})",
        f"sheet.csv:1: [guess] column 'Component': layer ({why})",
        f"sheet.csv:1: [guess] column 'Host': nodes ({why})",
        f"sheet.csv:1: [guess] column 'Job': run ({why})",
        f"sheet.csv:1: [guess] column 'Downtime (h)': impact.wall_hours_lost ({why})"]
    (record,) = _incidents(history).values()
    assert (record["detected_at"], record["resolved_at"], record["title"], record["layer"], record["nodes"],
            record["run"], record["impact"]) == ("2024-05-02", "2024-05-03", "Rank 3 stuck in all-gather on node07",
                                                 "nccl", ["node07"], "demo-7b", {"wall_hours_lost": 3.5})
    _valid(history)


def test_every_usual_column_name_feeds_a_field_the_import_takes() -> None:
    assert set(USUAL_NAMES.values()) <= set(mappable())


MAPPING_ERRORS = """\
columns:
  titel: Summary
  detected_at: [Date, Nope]
  layer: 3
values:
  layer:
    optim: training
defaults:
  run: no-such-run
dates:
  timezone: CET
"""


def test_mapping_errors_are_located_and_stop_the_import_before_anything_is_written(history: Path) -> None:
    (history / "bad.yaml").write_text(MAPPING_ERRORS)
    result = _import(history, "README-logbook.md", "--mapping", "bad.yaml")
    assert result.returncode == 1
    assert result.stderr == (
        "tooling: error: the mapping is not valid:\n"
        "bad.yaml:2:3: [mapping] unknown key 'titel'; did you mean 'title'?\n"
        "bad.yaml:4:10: [mapping] expected a column name, or a list of them but received: 3\n"
        "bad.yaml:11:13: [mapping] expected an offset from UTC such as +02:00 or -05:00, or Z but received: 'CET'\n"
        "(nothing was imported)\n")
    fixed = MAPPING_ERRORS.replace("titel", "title").replace("layer: 3", "layer: Layer").replace("CET", "'+01:00'")
    (history / "bad.yaml").write_text(fixed)
    result = _import(history, "README-logbook.md", "--mapping", "bad.yaml")
    assert result.stderr == (
        "tooling: error: the mapping is not valid:\n"
        "bad.yaml:7:12: [mapping] values.layer maps 'optim' to 'training': Expected one of: ['model-code', "
        "'framework', 'cuda-libraries', 'nccl', 'driver', 'gpu-hardware', 'host', 'network-fabric', 'storage', "
        "'scheduler', 'human-ops', 'data', 'training-dynamics', 'unknown'] but received: 'training'\n"
        "bad.yaml:9:8: [mapping] defaults.run 'no-such-run': no such run; expected one of: ['demo-7b']\n"
        "(nothing was imported)\n")
    (history / "bad.yaml").write_text(fixed.replace("optim: training", "optim: training-dynamics")
                                      .replace("no-such-run", "demo-7b"))
    result = _import(history, "README-logbook.md", "--mapping", "bad.yaml")
    assert result.stderr == (
        "tooling: error: the mapping is not valid:\n"
        "bad.yaml:3:23: [mapping] column 'Nope' is not in README-logbook.md; expected one of: "
        "['Date', 'Summary', 'Layer', 'Log', 'Where', 'Cluster', 'Lost (h)']\n"
        "(nothing was imported)\n")
    (history / "bad.yaml").write_text("columns:\n  title: [Summary\n")
    result = _import(history, "README-logbook.md", "--mapping", "bad.yaml")
    assert result.stderr == (
        "tooling: error: the mapping is not valid:\n"
        "bad.yaml:3:1: [yaml-syntax] did not find expected ',' or ']' (while parsing a flow sequence); "
        "expected valid YAML\n(nothing was imported)\n")
    assert not (history / "incidents").exists()


def test_a_row_that_can_be_filed_nowhere_stops_the_import(history: Path) -> None:
    (history / "nowhere.csv").write_text("title,detected_at,run\nNode lost power in rack 2,2024-01-02,13b-exp\n"
                                         "Loss went NaN at step 5k,2024-01-03,demo-7b\n")
    before = snapshot(history)
    result = _import(history, "nowhere.csv")
    assert result.returncode == 1
    assert result.stderr == (
        "tooling: error: nowhere.csv:2: the row names no run of this repository and no cluster, and neither "
        "--run or --cluster nor the mapping's defaults.run or defaults.cluster says where it goes; expected one "
        "of them\n(nothing was imported)\n")
    assert snapshot(history) == before


def test_a_logbook_of_one_cluster_or_one_run_says_so_on_the_command_line(history: Path) -> None:
    """As scan's --run and --cluster: rows that name no run go where the option says, a row's own run
    still wins, and a run or cluster name that cannot be is a usage error before anything is read."""
    (history / "pod.csv").write_text("Date,Issue,Resolution,Job\n"
                                     "2024-03-02,Xid 79 on gpu-a17 fell off the bus,drained gpu-a17; RMA,\n"
                                     "2024-03-05,Loss went NaN at step 5k,rolled back to step 4k,demo-7b\n")
    before = snapshot(history)
    for args, message in ((["--run", "13b-exp"], "--run '13b-exp': no such run; expected one of: ['demo-7b']"),
                          (["--cluster", "A100 pod"], "--cluster 'A100 pod': expected lower-case letters, digits "
                                                      "and dashes, such as demo-7b but received: 'A100 pod'")):
        result = _import(history, "pod.csv", *args)
        assert (result.returncode, result.stderr) == (2, f"tooling: error: {message}\n")
    assert snapshot(history) == before
    result = _import(history, "pod.csv", "--cluster", "a100-pod")
    assert result.returncode == 0, result.stderr
    xid, nan = _incidents(history).values()
    assert (xid["scope"], xid["cluster"], "run" in xid, xid["actions"]) == (
        "cluster", "a100-pod", False, ["drained gpu-a17; RMA"])  # a resolution is what was done
    assert (nan["run"], "cluster" in nan, nan["actions"]) == ("demo-7b", False, ["rolled back to step 4k"])
    _valid(history)


BY_HAND = """\
kind: incident
id: INC-0025
title: Rank 12 hung in all-gather after a switch firmware update
run: demo-7b
scope: run
status: resolved
severity: sev2
symptom: hang
secondary_symptom: crash
layer: network-fabric
failure_mode: nccl.collective-timeout
signatures: ["NCCL WARN Timeout at work 91"]
keywords: [stuck all-gather]
nodes: [node017, node018]
ranks: [12]
reported_by: dana
started_at: 2023-06-01T01:50:00+00:00
detected_at: 2023-06-01T02:00:00+00:00
mitigated_at: 2023-06-01T03:00:00+00:00
resolved_at: 2023-06-02
timeline:
  - at: 2023-06-01T02:00:00+00:00
    event: Paged for a stalled step counter
  - at: 2023-06-01T02:40:00+00:00
    event: py-spy showed rank 12 in all-gather
    by: dana
impact: {gpu_hours_lost: 64.5, steps_lost: 300, notes: one eval skipped}
actions: [drained node017, rolled the firmware back]
root_cause: A switch firmware update dropped packets under load.
notes: |-
  First seen on the new leaf switches.
  Watch the next firmware.
links: [{title: firmware notes, url: "https://example.org/fw/4.2"}]
tags: [nccl, firmware]
not_repeat_of: [INC-0003]
"""


def test_export_then_import_reproduces_every_field_and_the_references(history: Path, tmp_path: Path) -> None:
    assert _import(history, *LOGBOOK).returncode == 0
    (history / "incidents" / "INC-0024.yaml").write_text(
        (history / "incidents" / "INC-0024.yaml").read_text() + "repeat_of: INC-0005\nrelated: [INC-0001]\n")
    (history / "incidents" / "INC-0025.yaml").write_text(BY_HAND)
    out = tooling("export", "--jsonl", "-o", "all.jsonl", cwd=history)
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "exported 25 incidents to all.jsonl\n")
    exported = [json.loads(line) for line in (history / "all.jsonl").read_text().splitlines()]
    assert tooling("export", "--jsonl", cwd=history).stdout == (history / "all.jsonl").read_text()
    assert [e["detected_at"] for e in exported[:3]] == ["2022", "2022", "2022-03"]  # detection order
    assert exported[-1] == {"id": "INC-0025", "path": "incidents/INC-0025.yaml", **load_file(
        str(history / "incidents" / "INC-0025.yaml")).data}
    assert (exported[0]["id"], exported[0]["path"]) == ("INC-0004", "incidents/INC-0004.yaml")

    other = tmp_path / "other"
    (other / "runbooks" / "runs").mkdir(parents=True)
    (other / "runbooks" / "runs" / "demo-7b.yaml").write_text(RUN)
    shutil.copy(history / "all.jsonl", other / "all.jsonl")
    result = _import(other, "all.jsonl")
    assert result.returncode == 0, result.stderr
    assert "[guess]" not in result.stdout and "[unmapped]" not in result.stdout
    _valid(other)
    again = [json.loads(line) for line in tooling("export", "--jsonl", cwd=other).stdout.splitlines()]
    new_id = {e["id"]: a["id"] for e, a in zip(exported, again)}
    for old, new in zip(exported, again):
        marker = f'imported from all.jsonl id "{old["id"]}", content '
        assert re.fullmatch(re.escape(f"{old['notes']}\n\n{marker}") + "[0-9a-f]{16}", new["notes"])
        same = {k: v for k, v in old.items() if k not in ("id", "path", "notes", *REFERENCES)}
        assert {k: new[k] for k in same} == same
    ecc_again = next(a for e, a in zip(exported, again) if e["id"] == "INC-0024")
    assert (ecc_again["repeat_of"], ecc_again["related"]) == (new_id["INC-0005"], [new_id["INC-0001"]])
    assert again[-1]["not_repeat_of"] == [new_id["INC-0003"]] != ["INC-0003"]  # renumbered, and followed
    rerun = _import(other, "all.jsonl")
    assert rerun.stderr == "all.jsonl: 25 rows: 0 created, 25 imported before; 0 guesses, 0 unmapped values\n"


def test_export_of_a_broken_repository_is_the_usual_located_error(history: Path) -> None:
    (history / "incidents").mkdir()
    (history / "incidents" / "INC-0001.yaml").write_text("kind: incident\nid: INC-0001\ntitle: Broken\n")
    result = tooling("export", "--jsonl", "-o", "all.jsonl", cwd=history)
    assert result.returncode == 1
    assert result.stderr.startswith("tooling: error: records do not validate, so nothing was exported:\n"
                                    "incidents/INC-0001.yaml:1:1: [missing-field] missing required field 'detected_at'")
    assert not (history / "all.jsonl").exists()


def test_a_row_the_loader_refuses_at_write_time_leaves_no_row_imported(history: Path) -> None:
    rows = [{"title": "First row, a good one", "severity": "sev2", "run": "demo-7b", "detected_at": "2022-03-01"},
            {"title": "Second row, a bad rank", "severity": "sev2", "run": "demo-7b", "detected_at": "2022-03-02",
             "ranks": [99999999999999999999999]}]
    (history / "ranks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = snapshot(history)
    result = _import(history, "ranks.jsonl")
    assert result.returncode == 1
    assert result.stderr == ("tooling: error: ranks.jsonl:2: ranks: integer '99999999999999999999999' is too "
                             "large; expected a whole number of at most 9,223,372,036,854,775,807 (nothing was "
                             "imported: INC-0001, created before it, removed again)\n")
    assert snapshot(history) == before  # INC-0001, written for row 1, was removed again
    assert "ranks.jsonl:1: [created] INC-0001 (incidents/INC-0001.yaml)\n" in result.stdout


def test_a_disk_that_fills_mid_import_leaves_no_row_imported(history: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    import errno

    import tooling.writers.ids as allocation
    from tooling.main import main

    real, calls = allocation.create_file, []

    def filling(path: Path, text: str) -> None:
        calls.append(path.name)
        if len(calls) == 3:  # the third record finds the disk full
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, text)

    monkeypatch.setattr(allocation, "create_file", filling)
    monkeypatch.chdir(history)
    before = snapshot(history)
    assert main(["--now", NOW, "import", *LOGBOOK]) == 1
    assert capsys.readouterr().err == ("tooling: error: incidents/INC-0003.yaml: no space left on device; free some "
                                       "space and run it again (nothing was changed)\n")
    assert calls == ["INC-0001.yaml", "INC-0002.yaml", "INC-0003.yaml"]
    assert snapshot(history) == before


@pytest.mark.parametrize("output", ["incidents/INC-0001.yaml", "runbooks/runs/new.yml"])
def test_export_refuses_to_overwrite_a_record(history: Path, output: str) -> None:
    assert _import(history, *LOGBOOK).returncode == 0
    before = snapshot(history)
    result = tooling("export", "--jsonl", "-o", output, cwd=history)
    assert (result.returncode, result.stderr) == (
        2, f"tooling: error: --output: {output} is a record file of the repository (under incidents/, runbooks/); "
           "expected a file outside them or a name that does not end in .yaml or .yml, such as incidents.jsonl\n")
    assert snapshot(history) == before


@pytest.mark.parametrize(("output", "line"), [("mkdocs.yml", 1), ("ops-logbook.csv", 1), ("history.jsonl", 1),
                                              ("half.jsonl", 3)])
def test_export_replaces_only_an_earlier_export(history: Path, output: str, line: int) -> None:
    """`export -o mkdocs.yml` replaced the site's config with JSON Lines, exit 0 (only a record's
    path was refused): any existing file that is not an earlier export is left as it was."""
    assert tooling("export", "--jsonl", "-o", "all.jsonl", cwd=history).returncode == 0
    assert _import(history, "history.jsonl").returncode == 0
    exported = tooling("export", "--jsonl", cwd=history).stdout.splitlines()
    (history / "half.jsonl").write_text("\n".join([*exported[:2], "{}", *exported[2:]]) + "\n")  # begins like one
    before = snapshot(history)
    result = tooling("export", "--jsonl", "-o", output, cwd=history)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", f"tooling: error: --output: {output} exists and is not an earlier export (its line {line} is not an "
               "incident as export writes one), so it is not replaced; expected a new file or an earlier export, "
               "such as incidents.jsonl\n")
    assert snapshot(history) == before
    again = tooling("export", "--jsonl", "-o", "all.jsonl", cwd=history)  # an earlier export, empty or not
    assert (again.returncode, again.stderr) == (0, "exported 3 incidents to all.jsonl\n")
    assert tooling("export", "--jsonl", "-o", "all.jsonl", cwd=history).returncode == 0


def test_export_writes_into_a_fifo_and_refuses_a_loop_of_links_leaving_both_as_they_were(history: Path) -> None:
    import os
    import threading

    fifo = history / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = tooling("export", "--jsonl", "-o", "pipe", cwd=history)
    reader.join(timeout=30)
    assert (result.returncode, result.stderr, got) == (0, "exported 0 incidents to pipe\n", [b""])
    assert fifo.is_fifo()  # written to, not replaced by a regular file
    (history / "a").symlink_to("b")
    (history / "b").symlink_to("a")
    result = tooling("export", "--jsonl", "-o", "a", cwd=history)
    assert (result.returncode, result.stderr) == (1, "tooling: error: a: too many levels of symbolic links\n")
    assert os.readlink(history / "a") == "b"


def test_a_new_export_file_is_readable_by_others_like_a_new_record(history: Path) -> None:
    assert tooling("export", "--jsonl", "-o", "all.jsonl", cwd=history).returncode == 0
    assert (history / "all.jsonl").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize(("text", "value", "guess"), [
    ("2022-06-14T03:00:00+00:00", "2022-06-14T03:00:00+00:00", None),
    ("2022-06-14 03:00", "2022-06-14T03:00:00+00:00", "no time zone given; taken as UTC"),
    ("2022-06-14 03:00 +0200", "2022-06-14T03:00:00+02:00", None),
    ("June 2022", "2022-06", None),
    ("14 June 2022", "2022-06-14", None),
    ("June 14, 2022", "2022-06-14", None),
    ("2022", "2022", None),
    ("14/06/2022", "2022-06-14", None),
    ("03/04/2022", "2022-03-04",
     "'03/04/2022' read month first; set dates.day_first in the mapping if it is day first"),
    ("Q3 2022", "2022", "only the year could be read from 'Q3 2022'"),
    ("2022-02-30", "2022-02", "only the month could be read from '2022-02-30'"),
    ("last tuesday", None, "no date could be read from 'last tuesday'"),
    ("1970-01-01", None, "no date could be read from '1970-01-01'"),
])
def test_dates_are_read_into_the_schema_forms_and_each_loose_reading_says_why(text: str, value: str | None,
                                                                              guess: str | None) -> None:
    assert read_date(text) == Reading(value, guess)
    assert read_date("03/04/2022", DateRules(day_first=True)).value == "2022-04-03"
    assert read_date("2022-06-14 03:00", DateRules(timezone="+02:00")).guess is None


@pytest.mark.parametrize(("name", "cell", "value"), [
    ("impact.wall_hours_lost", "6h", 6), ("impact.wall_hours_lost", "~3 hours", 3),
    ("impact.wall_hours_lost", "45 min", 0.75), ("impact.wall_hours_lost", "1.5 days", 36),
    ("impact.gpu_hours_lost", "1,200", 1200), ("impact.gpu_hours_lost", "192 GPU-h", 192),
    ("impact.steps_lost", "12k", 12000), ("occurrences", "5x", 5), ("occurrences", "twice", 2),
    ("severity", "SEV-1", "sev1"), ("layer", "GPU hardware", "gpu-hardware"), ("symptom", "Loss Spike", "loss-spike"),
    ("tags", "GPU, Hardware Fault", ["gpu", "hardware-fault"]), ("ranks", "3, 7,3", [3, 7]),
])
def test_cells_become_field_values(name: str, cell: str, value: object) -> None:
    ctx = Context({}, {}, DateRules(), ("demo-7b",))
    assert convert(name, cell, "column", ctx).value == value


@pytest.mark.parametrize(("name", "cell", "unmapped"), [
    ("impact.wall_hours_lost", "-5", "column 'column': expected a number of at least 0"),  # was read as 5
    ("impact.wall_hours_lost", "\u22123 h", "column 'column': expected a number of at least 0"),
    ("impact.wall_hours_lost", "1e308", "column 'column': expected one number (units h, min or days allowed)"),
])
def test_a_cell_that_is_no_amount_is_unmapped_not_read_as_another(name: str, cell: str, unmapped: str) -> None:
    found = convert(name, cell, "column", Context({}, {}, DateRules(), ("demo-7b",)))
    assert (found.value, found.unmapped) == (None, unmapped)


def test_a_huge_count_is_refused_as_written(history: Path) -> None:
    _refused(history, "huge.csv", b"Date,Summary,Count,Cluster\n2024-01-01,GPU fell off the bus,"
             b"99999999999999999999999,c1\n", "huge.csv:2: occurrences: integer '99999999999999999999999' is too "
             "large; expected a whole number of at most 9,223,372,036,854,775,807 (nothing was imported)",
             mapping=None)


def test_the_mapping_schema_is_valid_described_and_offers_every_field_the_import_takes() -> None:
    schema = mapping_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert list(schema["properties"]["columns"]["properties"]) == list(mappable())
    sections = schema["properties"].values()
    assert all(s.get("description") for s in sections)
    assert all(spec.get("description") for s in sections for spec in s.get("properties", {}).values())
    assert all(d.get("description") for d in schema["$defs"].values())


@pytest.mark.parametrize(("name", "message"), [
    ("/dev/zero", "tooling: error: /dev/zero:1:1: [not-a-file] not a regular file (a folder, FIFO or device); "
                  "expected a logbook file (CSV, JSONL or a markdown table)\n"),
    (".", "tooling: error: .:1:1: [not-a-file] not a regular file (a folder, FIFO or device); "
          "expected a logbook file (CSV, JSONL or a markdown table)\n"),
])
def test_a_device_or_a_folder_is_refused_before_it_is_read(history: Path, name: str, message: str) -> None:
    """/dev/zero was read until the kernel killed the import for its memory."""
    before = snapshot(history)
    result = tooling("import", name, "--format", "csv", *LOGBOOK[1:], cwd=history, timeout=30)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", message)
    assert snapshot(history) == before


def test_a_bad_byte_after_a_bom_is_named_where_it_is(history: Path) -> None:
    """The byte and column counted from the text, not from the bytes after the BOM (was 0x50 at 2:45)."""
    header = (history / "ops-logbook.csv").read_bytes().splitlines()[0]
    _refused(history, "latin.csv", header + b"\nR-101,2022-03-02,,done,P1,7B main,Hardware,GPU \xff died\n",
             "latin.csv:2:48: [not-utf8] invalid UTF-8 byte 0xff; expected UTF-8 text (save the file as UTF-8)")


def _refused(history: Path, name: str, content: bytes, error: str,
             mapping: str | None = "ops-logbook.mapping.yaml") -> None:
    """Importing ``content`` as ``name`` is the one-line ``error`` and changes nothing (the guesses
    made before it, on standard output, are not looked at without a mapping)."""
    (history / name).write_bytes(content)
    before = snapshot(history)
    result = _import(history, name, *(["--mapping", mapping] if mapping else []))
    assert (result.returncode, result.stderr) == (1, f"tooling: error: {error}\n")
    assert mapping is None or result.stdout == ""
    assert snapshot(history) == before


@pytest.mark.parametrize("content", [b"", b"\xef\xbb\xbf\r\n\r\n"])
def test_an_empty_csv_says_so_instead_of_every_mapped_column_missing(history: Path, content: bytes) -> None:
    _refused(history, "empty.csv", content, "empty.csv:1:1: [empty-file] no header row (the file is empty or only "
             "blank lines); expected CSV with a header row naming the columns")


def test_export_to_dash_writes_standard_output_not_a_file_named_dash(history: Path) -> None:
    assert _import(history, *LOGBOOK).returncode == 0
    before = snapshot(history)
    result = tooling("export", "--jsonl", "-o", "-", cwd=history)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == tooling("export", "--jsonl", cwd=history).stdout
    assert len(result.stdout.splitlines()) == 24
    assert snapshot(history) == before
