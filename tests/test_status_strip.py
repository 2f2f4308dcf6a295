"""The status strip, the first-response block and the severity page as rendered (issue 26 items
1, 4 and 6): `tooling build --render-only` on the small corpus, its pages read as text. The
browser's side (the reader's clock, the first screen, copy buttons) is tests/site/test_status_strip_browser.py.
"""
from __future__ import annotations

import html
import json
import re
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import given, strategies as st

from support import tooling
from tooling.analysis.feed import feed_of
from tooling.analysis.status import STATES, base_state, status_of
from tooling.records.runs import STALL_AFTER_MINUTES, stall_minutes
from tooling.resilience.switch import Action, KillSwitch
from tooling.site.response import STATE_WORDS, severity_rows

NOW = "2026-11-29T12:00:00+00:00"
T = datetime.fromisoformat(NOW)
# The corpus's run with a directory for its switch (a space in it: the command must quote it),
# a heartbeat, a checkpoint, contacts, and an escalation; its last shift ended at 08:00, so nobody
# holds the pager at T.
RUN_EXTRA = """feed:
  heartbeat_at: 2026-11-29T11:50:00+00:00
  stall_after_minutes: 45
last_good_checkpoint: {step: 1200, path: /ckpt/step_1200, saved_at: 2026-11-29T09:00:00+00:00}
cluster: {scheduler: slurm}
"""
ESCALATION = """  escalation: carol
  contacts:
    - {person: bob, contact: '+1 555 0102'}
    - {person: carol, contact: 'pager 4411, Slack @carol'}
"""


def _render(repo: Path, run_dir: Path | None = None) -> Path:
    """The corpus with RUN_EXTRA, ESCALATION and ``run_dir`` in its run, rendered at T: docs/generated."""
    path = repo / "runbooks" / "runs" / "demo-7b.yaml"
    text = path.read_text().replace("updated_at:", RUN_EXTRA + "updated_at:").replace(
        "      night: true\n", "      night: true\n" + ESCALATION)
    if run_dir is not None:
        text += f"run_dir: {json.dumps(str(run_dir))}\n"
    path.write_text(text)
    result = tooling("build", "--render-only", "--now", NOW, cwd=repo)
    assert result.returncode == 0, result.stderr
    return repo / "docs" / "generated"


def _attribute(page: str, name: str) -> str:
    match = re.search(rf'{name}="([^"]*)"', page)
    assert match is not None, name
    return html.unescape(match.group(1))


def test_the_switch_commands_on_the_run_page_are_the_ones_the_switch_acts_on(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "run dir"
    folder.mkdir()
    page = (_render(repo, folder) / "runs" / "demo-7b.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)\n```", page)
    stop, save = f"touch '{folder}/STOP'", f"touch '{folder}/SAVE'"
    assert blocks == [stop, save, "scontrol update nodename=NODE state=drain reason='demo-7b: REASON'",
                      "tooling triage SYMPTOM --incident demo-7b"]
    switch = KillSwitch(folder)
    assert switch.check() is Action.CONTINUE
    subprocess.run(["sh", "-c", save], check=True)  # copied from the page, run as a person would
    assert switch.check() is Action.SAVE
    subprocess.run(["sh", "-c", stop], check=True)
    assert switch.check() is Action.STOP
    assert "SYMPTOM: one of ` checkpoint `, ` crash `, ` hang `):" in page  # the corpus's ladders, which triage walks


def test_a_run_without_run_dir_says_so_instead_of_guessing_a_path(repo: Path) -> None:
    page = (_render(repo) / "runs" / "demo-7b.md").read_text()
    assert "touch" not in page
    assert ("The record names no `run_dir`, so the kill/save switch's files (`STOP`, `SAVE`) have no place here "
            "yet: add the run's directory to the record.") in page


def test_the_strip_carries_the_records_stall_rule_and_nobody_points_to_the_escalation(repo: Path) -> None:
    generated = _render(repo)
    strip = (generated / "status.md").read_text()
    # the threshold is the record's (45), not a second copy of the default; the state without the
    # stall rule is what the browser starts from
    assert 'data-stall-after-minutes="45"' in strip and 'data-run-base="running"' in strip
    assert json.loads(_attribute(strip, "data-run-words")) == {s: s for s in STATES}
    assert '<strong class="run-state" data-run-state="running">running</strong>' in strip
    assert "heartbeat <span data-heartbeat-age>10 min</span> ago" in strip
    assert 'checkpoint <span data-age-since="2026-11-29T09:00:00Z">3 h</span> ago' in strip
    nobody = "nobody scheduled: call the escalation, carol (pager 4411, Slack @carol)"
    assert _attribute(strip, "data-oncall-nobody") == nobody
    assert ("on call: <span data-oncall-slot=\"now\">nobody scheduled: call the escalation, carol \\(pager 4411, "
            "Slack @carol\\)</span>") in strip
    assert "escalation: carol \\(pager 4411, Slack @carol\\)" in strip
    # open incidents by severity, the severity linked to its definition
    assert ("open incidents: [sev2](playbook/incident-response.md#sev2) "
            "[INC\\-0002](generated/incidents/INC-0002.md)") in strip
    run_page = (generated / "runs" / "demo-7b.md").read_text()
    assert _attribute(run_page, "data-oncall-nobody") == nobody
    assert ("**[Escalation:](../../playbook/incident-response.md#escalation)** carol \\(pager 4411, Slack "
            "@carol\\)") in run_page


def test_validate_and_the_severity_page_have_the_same_severities(repo: Path) -> None:
    """The severities `tooling validate` names when it refuses one are exactly the ones the page
    defines, each under a heading of its own that the site's links point at."""
    incident = repo / "incidents" / "INC-0001.yaml"
    incident.write_text(incident.read_text().replace("severity: sev1", "severity: sev9"))
    refused = tooling("validate", cwd=repo)
    assert refused.returncode == 1
    accepted = re.search(r"\[invalid-value\] Expected one of: \[(.*)\] but received: 'sev9'", refused.stdout)
    assert accepted is not None, refused.stdout
    vocabulary = re.findall(r"'([^']+)'", accepted.group(1))
    assert [s.id for s in severity_rows()] == vocabulary
    incident.write_text(incident.read_text().replace("severity: sev9", "severity: sev1"))
    page = (_render(repo) / "response.md").read_text()
    assert re.findall(r"^### (\S+) \{#(\S+)\}$", page, re.MULTILINE)[:len(vocabulary)] == [(s, s) for s in vocabulary]
    assert STATE_WORDS.keys() == set(STATES)


def test_an_incident_page_and_the_log_link_its_severity_to_the_definition(repo: Path) -> None:
    generated = _render(repo)
    assert "| Severity | [sev2](../../playbook/incident-response.md#sev2) |" in (
        generated / "incidents" / "INC-0002.md").read_text()
    log = (generated / "incidents" / "index.md").read_text()
    assert 'markdown="span">[sev1](../../playbook/incident-response.md#sev1)</td>' in log


RUN_STATES = ("planned", "running", "degraded", "paused", "stopped", "finished", "failed")


@given(state=st.sampled_from(RUN_STATES), ended_by_scheduler=st.booleans(),
       silence=st.integers(0, 3 * 24 * 60), minutes=st.one_of(st.none(), st.integers(1, 10080)))
def test_the_state_is_the_stall_rule_over_the_records_state(state: str, ended_by_scheduler: bool, silence: int,
                                                            minutes: int | None) -> None:
    """stalled exactly when a live run that did not end is silent for its stall threshold (the
    record's, else the default); else the record's state, "ended" for a run that ended."""
    now = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
    feed: dict[str, object] = {"heartbeat_at": (now - timedelta(minutes=silence)).isoformat()}
    if minutes is not None:
        feed["stall_after_minutes"] = minutes
    if ended_by_scheduler:
        feed["events"] = [{"at": now.isoformat(), "kind": "end", "job_id": "1"}]
    run = {"id": "r", "state": state, "feed": feed}
    live = state not in ("planned", "finished", "failed")
    status = status_of(run, feed_of(run, now=now, live=live, incidents={}, hang_ladder=None), [], now=now)
    threshold = minutes if minutes is not None else STALL_AFTER_MINUTES
    assert stall_minutes(run)[0] == threshold
    ended = ended_by_scheduler or state in ("finished", "failed")
    assert status.base == base_state(run) == ("ended" if ended else state if state in ("degraded", "paused", "stopped")
                                              else "running")
    assert (status.state == "stalled") == (live and not ended and silence >= threshold)
    assert status.state in STATES and status.active == live
