"""Analyses: pure functions from validated records to what the site and the CLI show."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from tooling.analysis.incidents import IncidentView, incident_views
from tooling.analysis.postmortems import ActionItemRow, PostmortemView, action_board, postmortem_views
from tooling.analysis.repeats import Candidate, candidates, group_ids
from tooling.analysis.runs import RunCard, run_cards
from tooling.analysis.similarity import Index, Suggestion, likely_repeats
from tooling.analysis.trends import Trends, trends
from tooling.records.model import Record


@dataclass(frozen=True)
class Analysis:
    now: datetime
    records: list[Record]  # every record analysed: what cross-record rules need when one is edited
    runs: list[RunCard]
    incidents: list[IncidentView]
    postmortems: list[PostmortemView]
    actions: list[ActionItemRow]
    trends: Trends
    ladders: list[Record]
    candidates: list[Candidate]
    suggestions: list[Suggestion]
    stack: Record | None
    index: Index  # the text-similarity index, built once for suggestions and for new incidents


def analyse(records: list[Record], *, now: datetime) -> Analysis:
    """Everything the site shows, computed once from the records and a fixed 'now'."""
    incidents = incident_views(records)
    postmortems = postmortem_views(records, incidents, now=now)
    groups = group_ids(incidents)
    index = Index(incidents)
    return Analysis(
        now=now,
        records=records,
        runs=run_cards(records, incidents, now=now),
        incidents=incidents,
        postmortems=postmortems,
        actions=action_board(postmortems),
        trends=trends(incidents),
        ladders=sorted((r for r in records if r.kind == "ladder"), key=lambda r: r.id),
        candidates=candidates(groups, postmortems),
        suggestions=likely_repeats(groups, index),
        stack=next((r for r in records if r.kind == "stack"), None),
        index=index,
    )


__all__ = ["Analysis", "analyse", "Candidate", "IncidentView", "PostmortemView", "RunCard", "ActionItemRow",
           "Suggestion", "Trends"]
