"""`tooling review POSTMORTEM-ID`: completeness and blamelessness, then submit or approve."""
from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tooling.errors import UsageError, UserError
from tooling.now import Clock
from tooling.records.findings import Finding, excerpt
from tooling.records.locate import locate, locate_text
from tooling.records.model import Record

if TYPE_CHECKING:
    from tooling.analysis import Analysis, PostmortemView
    from tooling.analysis.review import ReviewFinding

NAME = "review"
HELP = "check a postmortem is complete and blameless; submit or approve it"
DONE = {"submit": "submitted for review", "approve": "approved"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("postmortem", metavar="POSTMORTEM-ID")
    step = parser.add_mutually_exclusive_group()
    step.add_argument("--submit", action="store_true", help="draft -> in-review, if there are no findings")
    step.add_argument("--approve", action="store_true", help="in-review -> reviewed, if there are no findings")
    parser.add_argument("--reviewer", action="append", dest="reviewers", metavar="NAME",
                        help="who approves (repeatable; with --approve)")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    action = "submit" if args.submit else "approve" if args.approve else None
    return review_command(args.postmortem, root=root, now=clock(), action=action, reviewers=args.reviewers)


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
        if not known:  # "one of: []" tells a team with no postmortem yet nothing it can use
            raise UsageError(f"no postmortem in incidents/ yet but received: {excerpt(postmortem_id)}; expected the id "
                             "of one written with tooling new-postmortem")
        raise UsageError(f"Expected one of: {known} but received: {excerpt(postmortem_id)}")
    return found


def _transition(pm: PostmortemView, action: str, reviewers: list[str], *, universe: list[Record],
                now: datetime) -> None:
    """Decided on the file as it is under the record's lock, not as it was read for the review:
    of two approvals at once, the second sees 'reviewed' and is refused, instead of replacing
    the first one's reviewers with its own."""
    from tooling.analysis.review import TransitionError, transition
    from tooling.records.load import parse_text
    from tooling.writers.edit import edited_text, rewrite

    path = pm.record.path

    def change(text: str) -> str:
        try:
            changes = transition(parse_text(path, text).data, action, reviewers=reviewers, today=now.date())
        except TransitionError as exc:
            raise UserError(f"{pm.id} is {exc.status}; expected it {exc.expected} "
                            "(draft -> in-review with --submit, in-review -> reviewed with --approve)") from None
        return edited_text(text, changes, now=now)
    rewrite(Path(path), change, universe=universe, now=now)


def review_command(postmortem_id: str, *, root: Path, now: datetime, action: str | None,
                   reviewers: list[str] | None) -> int:
    from tooling.analysis import load_analysis
    from tooling.analysis.review import review

    if reviewers and action != "approve":  # else the names would be dropped without a word
        raise UsageError("--reviewer: only with --approve; expected --approve --reviewer NAME")
    if action == "approve" and not reviewers:
        raise UsageError("--approve needs at least one --reviewer NAME")
    analysis = load_analysis(root, now=now)
    pm = _postmortem(analysis, postmortem_id)
    findings = sorted(_located(pm.record.path, f) for f in review(pm, analysis.incidents))
    for finding in findings:
        print(finding.format(relative_to=Path.cwd()))
    if findings:
        print(f"{pm.id}: {len(findings)} finding(s); not {DONE.get(action or '', 'ready')}", file=sys.stderr)
        return 1
    if action is None:
        print(f"{pm.id}: complete and blameless (status: {pm.data['status']})", file=sys.stderr)
        return 0
    _transition(pm, action, reviewers or [], universe=analysis.records, now=now)
    done = DONE[action] + (f" by {', '.join(reviewers or [])}" if action == "approve" else "")
    print(f"{pm.id}: {done}", file=sys.stderr)
    return 0
