"""`tooling review POSTMORTEM-ID`: completeness and blamelessness, then submit or approve."""
from __future__ import annotations

import sys
from datetime import date, datetime
from pathlib import Path

from tooling.analysis import Analysis, PostmortemView
from tooling.analysis.review import ReviewFinding, review
from tooling.errors import UsageError, UserError
from tooling.records.edit import set_fields
from tooling.records.findings import Finding
from tooling.records.load import locate, locate_text
from tooling.records.roundtrip import load_value
from tooling.workspace import load_analysis


def _located(path: str, finding: ReviewFinding) -> Finding:
    if finding.phrase:
        line, col = locate_text(path, finding.keys, finding.phrase)
    else:
        line, col = locate(path, finding.keys, at_key=bool(finding.keys) and not isinstance(finding.keys[-1], int))
    return Finding(path, line, col, finding.rule, finding.message)


def _postmortem(analysis: Analysis, postmortem_id: str) -> PostmortemView:
    found = next((pm for pm in analysis.postmortems if pm.id == postmortem_id), None)
    if found is None:
        known = [pm.id for pm in analysis.postmortems]
        raise UsageError(f"Expected one of: {known} but received: {postmortem_id!r}")
    return found


def review_command(postmortem_id: str, *, root: Path, now: datetime, submit: bool,
                   approve: bool, reviewers: list[str] | None) -> int:
    analysis = load_analysis(root, now=now)
    pm = _postmortem(analysis, postmortem_id)
    findings = sorted(_located(pm.record.path, f) for f in review(pm, analysis.incidents))
    for finding in findings:
        print(finding.format(relative_to=Path.cwd()))
    if findings:
        action = "approved" if approve else "submitted for review" if submit else "ready"
        print(f"{pm.id}: {len(findings)} finding(s); not {action}", file=sys.stderr)
        return 1
    if approve:
        return _approve(pm, analysis, reviewers or [], now.date())
    if submit:
        return _transition(pm, analysis, "draft", [(["status"], "in-review")], "submitted for review")
    print(f"{pm.id}: complete and blameless (status: {pm.data['status']})", file=sys.stderr)
    return 0


def _approve(pm: PostmortemView, analysis: Analysis, reviewers: list[str], today: date) -> int:
    if not reviewers:
        raise UsageError("--approve needs at least one --reviewer NAME")
    names = list(dict.fromkeys([*pm.data.get("reviewers", []), *reviewers]))
    # Dates go in as YAML dates, written plain like the rest of the file, not as quoted strings.
    changes = [(["status"], "reviewed"), (["reviewers"], names), (["reviewed_on"], load_value(today.isoformat()))]
    return _transition(pm, analysis, "in-review", changes, f"approved by {', '.join(reviewers)}")


def _transition(pm: PostmortemView, analysis: Analysis, expected: str,
                changes: list[tuple[list[str], object]], done: str) -> int:
    if pm.data["status"] != expected:
        raise UserError(f"{pm.id} is {pm.data['status']}; expected it {expected} "
                        f"(draft -> in-review with --submit, in-review -> reviewed with --approve)")
    set_fields(Path(pm.record.path), changes, universe=analysis.records)
    print(f"{pm.id}: {done}", file=sys.stderr)
    return 0
