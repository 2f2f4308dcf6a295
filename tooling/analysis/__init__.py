"""Analyses: pure functions from validated records to what the site and the CLI show, and
:func:`load_analysis`, which reads and validates the repository's records first."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable
from datetime import datetime
from pathlib import Path

from tooling.analysis.incidents import IncidentView, incident_views
from tooling.analysis.ladder_links import LadderLinks, link_ladders
from tooling.analysis.paging import PagedSymptom, paging
from tooling.analysis.postmortems import ActionItemRow, PostmortemView, action_board, postmortem_views
from tooling.analysis.identity import Identity, identify_all
from tooling.analysis.candidates import Candidate, candidates
from tooling.analysis.levels import Family, families
from tooling.analysis.repeats import Group, groups_of
from tooling.analysis.runs import RunCard, run_cards
from tooling.analysis.similarity import Index, Suggestion, likely_repeats
from tooling.analysis.trends import Trends, trends
from tooling.catalogue.modes import FailureMode, catalogue
from tooling.errors import UserError
from tooling.records.layout import record_sources
from tooling.records.load import no_collection
from tooling.records.model import Record
from tooling.rules.validate import Checked, validate


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
    identities: dict[str, Identity]  # incident id -> the failure it is (see analysis.identity)
    groups: list[Group]  # every incident in exactly one group, with why they belong together
    families: list[Family]  # the groups one automation would each have handled, joined (analysis.levels)
    failure_modes: list[tuple[FailureMode, int]]  # the catalogue, with this repository's incidents of each
    paging: list[PagedSymptom]  # 'Paged? Start here': each symptom's ladder and latest incidents
    links: LadderLinks  # ladders and incidents both ways, and each failure mode's way in


def mode_counts(identities: Iterable[Identity]) -> list[tuple[FailureMode, int]]:
    """Every failure mode of the catalogue, in its order, with how many incidents are of it."""
    counts = Counter(i.mode.id for i in identities if i.mode is not None)
    return [(mode, counts[mode.id]) for mode in catalogue().modes]


def analyse(records: list[Record], *, now: datetime) -> Analysis:
    """Everything the site shows, computed once from the records and a fixed 'now'. Made with
    the collector off (as identities and groups already were): over 100,000 incidents its passes
    over every live object were a tenth of the time, and whatever cycles there are it finds later."""
    with no_collection():
        return _analyse(records, now=now)


def _analyse(records: list[Record], *, now: datetime) -> Analysis:
    incidents = incident_views(records)
    postmortems = postmortem_views(records, incidents, now=now)
    identities = identify_all(incidents)
    groups = groups_of(incidents, identities)
    found = families(groups, identities)
    index = Index(incidents)
    ladders = sorted((r for r in records if r.kind == "ladder"), key=lambda r: r.id)
    return Analysis(
        now=now,
        records=records,
        runs=run_cards(records, incidents, now=now),
        incidents=incidents,
        postmortems=postmortems,
        actions=action_board(postmortems),
        trends=trends(incidents),
        ladders=ladders,
        candidates=candidates(found, postmortems, identities),
        suggestions=likely_repeats([g.incidents for g in groups], index),
        stack=next((r for r in records if r.kind == "stack"), None),
        index=index,
        identities=identities,
        groups=groups,
        families=found,
        failure_modes=mode_counts(identities.values()),
        paging=paging(ladders, incidents),
        links=link_ladders(ladders, incidents, identities),
    )


def load_analysis(root: Path, *, now: datetime, checked: Checked | None = None) -> Analysis:
    """Validated records turned into the analysis; any validation error stops here. ``checked``:
    record files checked before (`tooling serve`), checked again only if they changed."""
    with no_collection():  # the checks kept are unpickled by the hundred thousand: see analyse
        report = validate(record_sources(root), root=root, now=now, checked=checked)
    if report.errors:
        lines = "\n".join(f.format(relative_to=Path.cwd()) for f in report.errors[:50])
        more = f"\n... and {len(report.errors) - 50} more" if len(report.errors) > 50 else ""
        raise UserError(f"records do not validate:\n{lines}{more}")
    return analyse(report.records, now=now)


__all__ = ["Analysis", "analyse", "load_analysis", "Candidate", "IncidentView", "PostmortemView", "RunCard",
           "ActionItemRow", "Suggestion", "Trends"]
