"""Analyses: pure functions from validated records to what the site and the CLI show."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from tooling.analysis.incidents import IncidentView, incident_views
from tooling.analysis.postmortems import ActionItemRow, PostmortemView, action_board, postmortem_views
from tooling.analysis.runs import RunCard, run_cards
from tooling.analysis.trends import Trends, trends
from tooling.records.model import Record


@dataclass(frozen=True)
class Analysis:
    now: datetime
    runs: list[RunCard]
    incidents: list[IncidentView]
    postmortems: list[PostmortemView]
    actions: list[ActionItemRow]
    trends: Trends
    ladders: list[Record]


def analyse(records: list[Record], *, now: datetime) -> Analysis:
    """Everything the site shows, computed once from the records and a fixed 'now'."""
    incidents = incident_views(records)
    postmortems = postmortem_views(records, incidents, now=now)
    return Analysis(
        now=now,
        runs=run_cards(records, incidents, now=now),
        incidents=incidents,
        postmortems=postmortems,
        actions=action_board(postmortems),
        trends=trends(incidents),
        ladders=sorted((r for r in records if r.kind == "ladder"), key=lambda r: r.id),
    )


__all__ = ["Analysis", "analyse", "IncidentView", "PostmortemView", "RunCard", "ActionItemRow", "Trends"]
