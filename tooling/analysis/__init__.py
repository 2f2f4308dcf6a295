"""Analyses: pure functions from validated records to what the site and the CLI show, and
:func:`load_analysis`, which reads and validates the repository's records first."""
from __future__ import annotations

import dataclasses
from contextlib import nullcontext
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterable
from datetime import datetime
from pathlib import Path

from tooling.analysis.incidents import IncidentView, incident_views
from tooling.analysis.ladder_links import LadderLinks, link_ladders
from tooling.analysis.paging import PagedSymptom, paging
from tooling.analysis.postmortems import ActionItemRow, PostmortemView, action_board, postmortem_views
from tooling.analysis.identity import Identity, identify_all
from tooling.analysis.candidates import Candidate, candidates
from tooling.analysis.derived import Kept, kept_codes, kept_identities, kept_signatures, kept_terms
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


# The parts only the site shows: computed when first asked for, so that `tooling repeats` over
# 100,000 incidents does not make them (trends, paging and ladder links were a tenth of its time)
_LAZY = ("runs", "actions", "trends", "failure_modes", "paging", "links")


@dataclass(frozen=True)
class Analysis:
    now: datetime
    records: list[Record]  # every record analysed: what cross-record rules need when one is edited
    incidents: list[IncidentView]
    postmortems: list[PostmortemView]
    ladders: list[Record]
    candidates: list[Candidate]
    suggestions: list[Suggestion]
    stack: Record | None
    index: Index  # the text-similarity index, built once for suggestions and for new incidents
    identities: dict[str, Identity]  # incident id -> the failure it is (see analysis.identity)
    groups: list[Group]  # every incident in exactly one group, with why they belong together
    families: list[Family]  # the groups one automation would each have handled, joined (analysis.levels)

    @cached_property
    def runs(self) -> list[RunCard]:
        with no_collection():
            return run_cards(self.records, self.incidents, now=self.now)

    @cached_property
    def actions(self) -> list[ActionItemRow]:
        return action_board(self.postmortems)

    @cached_property
    def trends(self) -> Trends:
        with no_collection():
            return trends(self.incidents)

    @cached_property
    def failure_modes(self) -> list[tuple[FailureMode, int]]:
        """The catalogue, with this repository's incidents of each."""
        return mode_counts(self.identities.values())

    @cached_property
    def paging(self) -> list[PagedSymptom]:
        """'Paged? Start here': each symptom's ladder and latest incidents."""
        with no_collection():
            return paging(self.ladders, self.incidents)

    @cached_property
    def links(self) -> LadderLinks:
        """Ladders and incidents both ways, and each failure mode's way in."""
        with no_collection():
            return link_ladders(self.ladders, self.incidents, self.identities)

    def shown_with(self, **changes: Any) -> Analysis:
        """A copy with ``changes`` (lazy parts among them, as an edition's ladders and paging),
        carrying over the lazy parts already computed that ``changes`` does not replace."""
        view = dataclasses.replace(self, **{k: v for k, v in changes.items() if k not in _LAZY})
        view.__dict__.update({k: v for k, v in self.__dict__.items() if k in _LAZY})
        view.__dict__.update({k: v for k, v in changes.items() if k in _LAZY})
        return view


def mode_counts(identities: Iterable[Identity]) -> list[tuple[FailureMode, int]]:
    """Every failure mode of the catalogue, in its order, with how many incidents are of it."""
    counts = Counter(i.mode.id for i in identities if i.mode is not None)
    return [(mode, counts[mode.id]) for mode in catalogue().modes]


def analyse(records: list[Record], *, now: datetime, kept: Kept | None = None) -> Analysis:
    """Everything the site shows, from the records and a fixed 'now' (its site-only parts when
    first asked for: see _LAZY). Made with
    the collector off (as identities and groups already were): over 100,000 incidents its passes
    over every live object were a tenth of the time, and whatever cycles there are it finds later."""
    with no_collection():
        return _analyse(records, now=now, kept=kept)


def _analyse(records: list[Record], *, now: datetime, kept: Kept | None) -> Analysis:
    incidents = incident_views(records)
    postmortems = postmortem_views(records, incidents, now=now)
    identities = identify_all(incidents) if kept is None else kept_identities(incidents, kept)
    groups = groups_of(incidents, identities, None if kept is None else kept_codes(kept))
    found = families(groups, identities)
    index = Index(incidents, None if kept is None else kept_terms(incidents, kept))
    return Analysis(
        now=now,
        records=records,
        incidents=incidents,
        postmortems=postmortems,
        ladders=sorted((r for r in records if r.kind == "ladder"), key=lambda r: r.id),
        candidates=candidates(found, postmortems, identities, None if kept is None else kept_signatures(incidents, kept)),
        suggestions=likely_repeats([g.incidents for g in groups], index),
        stack=next((r for r in records if r.kind == "stack"), None),
        index=index,
        identities=identities,
        groups=groups,
        families=found,
    )


def load_analysis(root: Path, *, now: datetime, checked: Checked | None = None) -> Analysis:
    """Validated records turned into the analysis; any validation error stops here. ``checked``:
    record files checked before (`tooling serve`), checked again only if they changed."""
    # one stretch with the collector off (the checks kept are unpickled by the hundred thousand:
    # see analyse): re-enabled in between, its first pass walked every record read. Only the
    # errors are read: the cross-record rules that only warn (a clock ahead, a stale draft) are
    # not run, a tenth of validate's time over 100,000 incidents
    # the checks and what the analysis derived from each file (analysis.derived) saved once, at the end
    with no_collection(), checked.saved_once() if checked is not None else nullcontext():
        report = validate(record_sources(root), root=root, now=now, checked=checked, warnings=False)
        if report.errors:
            lines = "\n".join(f.format(relative_to=Path.cwd()) for f in report.errors[:50])
            more = f"\n... and {len(report.errors) - 50} more" if len(report.errors) > 50 else ""
            raise UserError(f"records do not validate:\n{lines}{more}")
        return analyse(report.records, now=now, kept=checked)


__all__ = ["Analysis", "analyse", "load_analysis", "Candidate", "IncidentView", "PostmortemView", "RunCard",
           "ActionItemRow", "Suggestion", "Trends"]
