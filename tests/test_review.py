"""`tooling review`: every planted blame phrase and incomplete item is flagged at its line."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from support import CORPUS, snapshot, tooling

REVIEW = CORPUS / "review"
EXPECTED = yaml.safe_load((REVIEW / "expected.yaml.txt").read_text())


def _findings(postmortem: str) -> tuple[int, list[str]]:
    result = tooling("review", postmortem, cwd=REVIEW)
    assert "Traceback" not in result.stderr
    return result.returncode, result.stdout.splitlines()


def test_a_clean_postmortem_has_no_finding() -> None:
    result = tooling("review", "PM-0001", cwd=REVIEW)
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr == "PM-0001: complete and blameless (status: reviewed)\n"


@pytest.mark.parametrize("postmortem", ["PM-0002", "PM-0003"])
def test_every_planted_problem_is_flagged_at_its_line(postmortem: str) -> None:
    code, lines = _findings(postmortem)
    planted = [e for e in EXPECTED if e["file"] == f"{postmortem}.yaml"]
    assert code == 1
    assert len(lines) == len(planted)  # nothing flagged that was not planted
    flagged_lines = [int(re.match(r"incidents/PM-\d+\.yaml:(\d+):", line).group(1)) for line in lines]
    for entry in planted:
        if entry["line"] is not None:
            assert entry["line"] in flagged_lines, entry
    for entry in planted:
        if entry["kind"] == "blame":
            line = next(l for l in lines if l.startswith(f"incidents/{postmortem}.yaml:{entry['line']}:"))
            wording = re.search(r"\[review-blame\] blaming wording '([^']+)'", line).group(1).lower()
            assert wording in entry["phrase"].lower()


def test_incomplete_postmortem_messages() -> None:
    _, lines = _findings("PM-0003")
    assert lines == [
        "incidents/PM-0003.yaml:1:1: [review-incomplete] section 'lessons' is missing; expected it filled in",
        "incidents/PM-0003.yaml:1:1: [review-incomplete] section 'where_we_got_lucky' is missing; expected it filled in",
        "incidents/PM-0003.yaml:6:5: [review-incident] incident INC-0006 is investigating; expected it resolved before the review",
        "incidents/PM-0003.yaml:11:1: [review-incomplete] section 'summary' is empty; expected it filled in",
        "incidents/PM-0003.yaml:38:1: [review-action-item] no action item prevents or detects a recurrence; "
        "expected at least one of kind prevent or detect",
        "incidents/PM-0003.yaml:44:5: [review-action-item] action item 2 has no owner; expected one",
        "incidents/PM-0003.yaml:48:5: [review-action-item] action item 3 has no due date; expected one",
        "incidents/PM-0003.yaml:52:1: [review-incomplete] the review meeting has no date; expected review.date",
    ]


def test_blame_finding_suggests_a_system_focused_rewording() -> None:
    _, lines = _findings("PM-0002")
    assert ("incidents/PM-0002.yaml:88:10: [review-blame] blaming wording 'should have known': say where the "
            "information was and why it did not reach the people who needed it") in lines


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "review"
    shutil.copytree(REVIEW, root)
    return root


def test_submit_then_approve_keeps_comments(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    path = root / "incidents" / "PM-0001.yaml"
    text = path.read_text().replace("status: reviewed", "status: draft  # being written", 1)
    path.write_text("# reviewed in the weekly ops meeting\n" + text)
    assert tooling("review", "PM-0001", "--approve", "--reviewer", "Zoe", cwd=root).stderr == (
        "tooling: error: PM-0001 is draft; expected it in-review (draft -> in-review with --submit, "
        "in-review -> reviewed with --approve)\n")
    submitted = tooling("review", "PM-0001", "--submit", cwd=root)
    assert (submitted.returncode, submitted.stderr) == (0, "PM-0001: submitted for review\n")
    approved = tooling("review", "PM-0001", "--approve", "--reviewer", "Zoe", "--now",
                       "2026-11-30T10:00:00+00:00", cwd=root)
    assert (approved.returncode, approved.stderr) == (0, "PM-0001: approved by Zoe\n")
    after = path.read_text()
    assert after.startswith("# reviewed in the weekly ops meeting\n")
    assert "status: reviewed  # being written\n" in after
    assert "reviewed_on: 2026-11-30" in after and "- Zoe" in after
    assert tooling("validate", "--strict", cwd=root).returncode == 0


def test_approval_is_refused_while_findings_remain(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    path = root / "incidents" / "PM-0002.yaml"
    path.write_text(path.read_text().replace("status: draft", "status: in-review", 1))
    before = path.read_bytes()
    result = tooling("review", "PM-0002", "--approve", "--reviewer", "Zoe", cwd=root)
    assert result.returncode == 1
    assert result.stderr == "PM-0002: 10 finding(s); not approved\n"
    assert path.read_bytes() == before


def test_unknown_postmortem_is_a_usage_error() -> None:
    result = tooling("review", "PM-0404", cwd=REVIEW)
    assert (result.returncode, result.stderr) == (
        2, "tooling: error: Expected one of: ['PM-0001', 'PM-0002', 'PM-0003'] but received: 'PM-0404'\n")


def test_a_postmortem_named_where_there_is_none_yet_says_so(tmp_path: Path) -> None:
    (tmp_path / "incidents").mkdir()
    result = tooling("review", "PM-0001", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "tooling: error: no postmortem in incidents/ yet but received: 'PM-0001'; expected the id of one "
               "written with tooling new-postmortem\n")


def test_validation_warns_about_a_draft_left_too_long(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    path = root / "incidents" / "PM-0001.yaml"
    path.write_text(path.read_text().replace("status: reviewed", "status: draft", 1))
    result = tooling("validate", cwd=root)
    assert result.returncode == 0
    assert re.fullmatch(r"incidents/PM-0001\.yaml:\d+:9: \[stale-draft\] warning: still a draft \d+ days after "
                        r"its incidents were resolved; expected it reviewed within 14 days \(tooling review "
                        r"--submit, then --approve\)\n", result.stdout)
    assert tooling("validate", "--strict", cwd=root).returncode == 1


def test_approvals_at_once_are_decided_on_the_file_under_its_lock(tmp_path: Path) -> None:
    """Each approval read 'in-review' before taking the lock: three said 'approved by rN' and the
    file named one of them. Now the first approves and the others see 'reviewed'."""
    root = _copy(tmp_path)
    path = root / "incidents" / "PM-0001.yaml"
    path.write_text(path.read_text().replace("status: reviewed", "status: in-review", 1))
    names = [f"r{n}" for n in range(4)]
    runs = [subprocess.Popen([sys.executable, "-m", "tooling", "review", "PM-0001", "--approve", "--reviewer", name],
                             cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for name in names]
    results = [(run.wait(timeout=120), run.stderr.read()) for run in runs]  # type: ignore[union-attr]
    approved = [name for name, (code, err) in zip(names, results) if code == 0]
    assert len(approved) == 1, results
    assert yaml.safe_load(path.read_text())["reviewers"] == ["Bruno", approved[0]]
    assert sorted(err for code, err in results if code != 0) == 3 * [
        "tooling: error: PM-0001 is reviewed; expected it in-review (draft -> in-review with --submit, "
        "in-review -> reviewed with --approve)\n"]


def test_a_reviewer_without_approve_is_refused_not_dropped(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    before = snapshot(root)
    result = tooling("review", "PM-0001", "--submit", "--reviewer", "Zoe", cwd=root)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "tooling: error: --reviewer: only with --approve; expected --approve --reviewer NAME\n"
    assert snapshot(root) == before
