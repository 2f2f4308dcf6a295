"""Which template renders which page: one row per page type, record views to output paths."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from tooling.analysis import Analysis

GENERATED_DIR = "docs/generated"  # relative to the repository root; never committed


@dataclass(frozen=True)
class PageType:
    output: str  # relative to GENERATED_DIR; "{id}" is replaced by each item's id
    template: str
    items: Callable[[Analysis], Sequence[Any]] | None = None  # None: a single page

    def pages(self, analysis: Analysis) -> list[tuple[str, Any]]:
        if self.items is None:
            return [(self.output, None)]
        return [(self.output.format(id=item.id), item) for item in self.items(analysis)]


# Where the page of each record kind goes; links between records resolve through this.
RECORD_PAGES = {
    "incident": "incidents/{id}.md",
    "postmortem": "postmortems/{id}.md",
    "run": "runs/{id}.md",
    "ladder": "ladders/{id}.md",
}

PAGE_TYPES: tuple[PageType, ...] = (
    PageType("home-cards.md", "home_cards.md.j2"),
    PageType("status.md", "status.md.j2"),  # the status strip that opens the home page
    PageType("paged.md", "paged.md.j2"),  # the home page's "Paged? Start here" box
    PageType("lookup.md", "lookup.md.j2"),  # the home page's way in from an error line
    PageType("response.md", "response.md.j2"),  # the severity page's severities, roles, first five minutes
    PageType("runs/SUMMARY.md", "runs_nav.md.j2"),
    PageType(RECORD_PAGES["run"], "run.md.j2", lambda a: a.runs),
    PageType("incidents/SUMMARY.md", "incidents_nav.md.j2"),
    PageType("incidents/index.md", "incident_log.md.j2"),
    PageType(RECORD_PAGES["incident"], "incident.md.j2", lambda a: a.incidents),
    PageType("postmortems/SUMMARY.md", "postmortems_nav.md.j2"),
    PageType("postmortems/index.md", "postmortem_index.md.j2"),
    PageType("postmortems/action-items.md", "action_items.md.j2"),
    PageType(RECORD_PAGES["postmortem"], "postmortem.md.j2", lambda a: a.postmortems),
    PageType("ladders/SUMMARY.md", "ladders_nav.md.j2"),
    PageType("ladders/index.md", "ladders_index.md.j2"),
    PageType(RECORD_PAGES["ladder"], "ladder.md.j2", lambda a: a.ladders),
    PageType("trends.md", "trends.md.j2"),
    PageType("stack.md", "stack.md.j2"),
    PageType("repeats.md", "repeats.md.j2"),
    PageType("reference.md", "reference.md.j2"),
    PageType("failure-modes.md", "failure_modes.md.j2"),
    PageType("tags.md", "tags.md.j2"),
)
