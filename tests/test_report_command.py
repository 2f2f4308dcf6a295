"""`tooling report`: progress and scheduler events from the shell; bad input is one line and changes nothing."""
from __future__ import annotations

from pathlib import Path

import pytest

from support import snapshot, tooling
from tooling.records.load import load_file

NOW = "2026-11-28T12:00:00+00:00"
RUN_FILE = Path("runbooks") / "runs" / "demo-7b.yaml"


def test_progress_checkpoint_and_event_in_one_call(repo: Path) -> None:
    result = tooling("report", "demo-7b", "--step", "1200", "--loss", "2.5", "--tokens-per-s", "3900",
                     "--tokens", "4915200", "--checkpoint-step", "1000", "--checkpoint-path", "/ckpt/1000.pt",
                     "--checkpoint-verified", "--event", "end", "--job-id", "4242_3", "--exit-code", "0",
                     "--state", "COMPLETED", "--now", NOW, cwd=repo)
    assert (result.returncode, result.stdout, result.stderr) == (0, "updated runbooks/runs/demo-7b.yaml\n", "")
    data = load_file(str(repo / RUN_FILE)).data
    # tokens as the run schema words them (412B) and RunReporter writes them; it wrote '4915200' here
    assert data["progress"] == {"step": 1200, "loss": 2.5, "tokens_seen": "4.92M", "throughput": "3,900 tokens/s"}
    assert data["last_good_checkpoint"] == {"step": 1000, "path": "/ckpt/1000.pt", "verified": True}
    assert data["feed"] == {
        "heartbeat_at": NOW,
        "samples": [{"at": NOW, "step": 1200, "loss": 2.5, "tokens_per_s": 3900.0}],
        "events": [{"at": NOW, "kind": "end", "job_id": "4242_3", "step": 1200, "exit_code": 0, "state": "COMPLETED"}]}
    assert data["updated_at"] == "2026-11-28T09:00:00+00:00"  # untouched: people say when they updated the page


def test_an_event_takes_the_job_id_from_slurm(repo: Path) -> None:
    env = {"SLURM_JOB_ID": "77", "SLURM_ARRAY_JOB_ID": "70", "SLURM_ARRAY_TASK_ID": "7"}
    result = tooling("report", "demo-7b", "--event", "signal", "--signal", "USR1", "--now", NOW, cwd=repo, env=env)
    assert result.returncode == 0, result.stderr
    assert load_file(str(repo / RUN_FILE)).data["feed"] == {
        "events": [{"at": NOW, "kind": "signal", "job_id": "70_7", "signal": "USR1"}]}


BAD = {
    "loss without a step": (["--loss", "2.5"], 2, "tooling: error: --loss: needs --step; expected the step this value "
                                                   "belongs to"),
    "nothing": ([], 2, "tooling: error: nothing to report; expected --step, --checkpoint-step or --event"),
    "half a checkpoint": (["--checkpoint-step", "10"], 2, "tooling: error: --checkpoint-path: missing; expected "
                                                          "--checkpoint-step and --checkpoint-path together"),
    "exit code of a start": (["--event", "start", "--job-id", "1", "--exit-code", "1"], 2,
                             "tooling: error: --exit-code: only for --event end, not --event start"),
    "signal without its name": (["--event", "signal", "--job-id", "1"], 2, "tooling: error: --signal: missing; "
                                "expected the signal's name with --event signal, e.g. --signal USR1"),
    "job id outside slurm": (["--event", "start"], 2, "tooling: error: --job-id: missing and not inside a SLURM job "
                                                      "(no SLURM_JOB_ID); expected the job's id"),
    "state without event": (["--step", "1", "--state", "FAILED"], 2, "tooling: error: --state: needs --event; "
                                                                     "expected --event start|signal|drain|requeue|resume|end"),
    "not a number": (["--step", "1", "--loss", "nan"], 2, "tooling: error: report: argument --loss: expected a finite "
                                                          "number but received: 'nan'"),
    "negative throughput": (["--step", "1", "--tokens-per-s", "-3"], 2, "tooling: error: report: argument "
                            "--tokens-per-s: expected a number >= 0 but received: '-3'"),
    "negative step": (["--step", "-1"], 2, "tooling: error: report: argument --step: expected a whole number >= 0 "
                                           "but received: '-1'"),
    "unknown event": (["--event", "crash"], 2, "tooling: error: report: argument --event: Expected one of: "
                                               "['start', 'signal', 'drain', 'requeue', 'resume', 'end'] but "
                                               "received: 'crash'"),
    "incident of a start": (["--event", "start", "--job-id", "1", "--incident", "INC-0001"], 2,
                            "tooling: error: --incident: only for --event end or drain, not --event start"),
    "resume without its step": (["--event", "resume", "--job-id", "1"], 2, "tooling: error: --step: missing; "
                                "expected the step of the checkpoint resumed from with --event resume"),
    "serve with a run": (["--serve"], 2, "tooling: error: RUN: not with --serve; expected --serve alone (each request "
                                         "names its run and repository)"),
}


@pytest.mark.parametrize(("args", "line"), [
    ([], "tooling: error: RUN: missing; expected the run id (runbooks/runs/<id>.yaml)"),
    (["--serve", "--step", "3"], "tooling: error: --step: not with --serve; expected --serve alone (each request names "
                                 "its run and repository)")])
def test_a_report_without_its_run_or_a_serve_with_options_is_one_line(repo: Path, args: list[str], line: str) -> None:
    result = tooling("report", *args, cwd=repo)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", line + "\n")


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_located_line_and_changes_nothing(repo: Path, case: str) -> None:
    args, code, line = BAD[case]
    before = snapshot(repo)
    env = {"SLURM_JOB_ID": "", "SLURM_ARRAY_JOB_ID": "", "SLURM_ARRAY_TASK_ID": ""}
    result = tooling("report", "demo-7b", *args, cwd=repo, env=env)
    assert (result.returncode, result.stdout, result.stderr) == (code, "", line + "\n")
    assert "Traceback" not in result.stderr
    assert snapshot(repo) == before


def test_a_drain_links_the_nodes_incident_and_a_resume_names_its_checkpoint_step(repo: Path) -> None:
    env = {"SLURM_JOB_ID": "88", "SLURM_ARRAY_JOB_ID": "", "SLURM_ARRAY_TASK_ID": ""}
    drained = tooling("report", "demo-7b", "--event", "drain", "--host", "n2", "--incident", "INC-0001", "--detail",
                      "gpu.fell-off-bus Xid 79 GPU 0, INC-0001", "--now", NOW, cwd=repo, env=env)
    resumed = tooling("report", "demo-7b", "--event", "resume", "--step", "240", "--host", "n1", "--detail",
                      "on n1 n3 n4", "--now", NOW, cwd=repo, env=env)
    assert (drained.returncode, drained.stderr, resumed.returncode, resumed.stderr) == (0, "", 0, "")
    assert load_file(str(repo / RUN_FILE)).data["feed"]["events"] == [
        {"at": NOW, "kind": "drain", "job_id": "88", "host": "n2", "incident": "INC-0001",
         "detail": "gpu.fell-off-bus Xid 79 GPU 0, INC-0001"},
        {"at": NOW, "kind": "resume", "job_id": "88", "step": 240, "host": "n1", "detail": "on n1 n3 n4"}]


def test_the_event_kinds_are_the_run_schemas() -> None:
    from tooling.commands.report import KINDS
    from tooling.records.schema import schema_for

    events = schema_for("run")["properties"]["feed"]["properties"]["events"]["items"]["properties"]
    assert list(KINDS) == events["kind"]["enum"]


def test_a_broken_record_is_named_where_it_breaks_and_left_alone(repo: Path) -> None:
    path = repo / RUN_FILE
    path.write_text(path.read_text().replace("state: running", "state: [running"))
    before = snapshot(repo)
    result = tooling("report", "demo-7b", "--step", "5", cwd=repo)
    assert (result.returncode, result.stderr) == (
        1, "tooling: error: runbooks/runs/demo-7b.yaml:6:13: [yaml-syntax] did not find expected ',' or ']' "
           "(while parsing a flow sequence); expected valid YAML (not changed: fix the file by hand first)\n")
    assert snapshot(repo) == before


def test_an_unknown_run_is_said_and_nothing_is_written(repo: Path) -> None:
    before = snapshot(repo)
    result = tooling("report", "demo-8b", "--step", "5", cwd=repo)
    assert (result.returncode, result.stderr) == (1, "tooling: error: no record with id 'demo-8b' in runbooks/runs/; "
                                                     "expected the id of an existing run record\n")
    assert snapshot(repo) == before


def test_an_event_that_would_break_the_record_is_named_relative_and_located(repo: Path) -> None:
    before = snapshot(repo)
    result = tooling("report", "demo-7b", "--event", "end", "--job-id", "7", "--exit-code", "1", "--state", "FAILED",
                     "--incident", "INC-9999", cwd=repo)
    # feed.events is not in the file yet: located as deep as it exists, the record's mapping
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "", "tooling: error: runbooks/runs/demo-7b.yaml:1:1: [unresolved-ref] incident 'INC-9999' does not exist; "
               "expected the id of an existing incident record (not changed: the edit would make the record invalid)\n")
    assert snapshot(repo) == before
