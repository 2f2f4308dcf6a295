"""Rendering pages with jinja2: templates lay out what analyses computed, nothing more.

Large sites render in two processes (forked, so the analysis is shared without pickling);
a page is written only when its text changed, and pages of removed records are deleted.
"""
from __future__ import annotations

import multiprocessing
import os
import posixpath
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import Markup

from tooling.analysis import Analysis
from tooling.analysis.catalogue import by_id
from tooling.analysis.feed import Feed
from tooling.analysis.incidents import FACETS, IncidentView
from tooling.records.model import Record
from tooling.site import charts
from tooling.site.escape import link, md_inline
from tooling.site.fences import fenced
from tooling.site.filters import code, dt, environment
from tooling.site.freshness import template_globals as freshness_globals
from tooling.site.history import Change
from tooling.site.labs import lab_pages
from tooling.site.pages import PAGE_TYPES, RECORD_PAGES
from tooling.site.links import candidate_anchor, playbook_target, tag_anchor
from tooling.site.source import Sources
from tooling.site.reference import field_reference

PARALLEL_FROM = 300  # pages; below this a second process costs more than it saves


@dataclass
class RenderResult:
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)

    def add(self, other: "RenderResult") -> None:
        self.written += other.written
        self.unchanged += other.unchanged
        self.removed += other.removed


def _tags(view: IncidentView) -> list[str]:
    return [f"{facet}: {view.facet(facet)}" for facet in FACETS]


class _Helpers:
    """Per-build template globals that need the analysis or the git history."""

    def __init__(self, analysis: Analysis, history: dict[str, list[Change]], root: Path) -> None:
        self.titles = {v.id: v.data["title"] for v in analysis.incidents}
        self.history = history
        self.root = root
        records = [*(v.record for v in analysis.incidents), *(v.record for v in analysis.postmortems),
                   *(c.record for c in analysis.runs), *analysis.ladders]
        self.pages = {os.path.abspath(r.path): RECORD_PAGES[r.kind].format(id=r.id) for r in records}

    def record_link(self, title: str, url: str, record: Record, from_dir: str) -> Markup:
        """A link written in a record: repository paths to other records become site links."""
        if not url.startswith(("./", "../", "/")):
            return link(title, url)
        target = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(record.path)), url))
        page = self.pages.get(target)
        if page is not None:
            return link(title, posixpath.relpath(page, from_dir))
        shown = os.path.relpath(target, self.root) if target.startswith(str(self.root)) else url
        return Markup(f"{md_inline(title)} ({code(shown)} in the repository)")

    def incident_ref(self, incident_id: str) -> Markup:
        return link(f"{incident_id} {self.titles.get(incident_id, '')}".strip(), f"{incident_id}.md")

    def history_note(self, record: Record) -> Markup:
        changes = self.history.get(os.path.normpath(os.path.abspath(record.path)), [])
        if not changes:
            return Markup("## History\n\n*This record is not committed to git yet.*\n")
        rows = "\n".join(f"| {dt(c.date)} | {md_inline(c.author)} | {code(c.sha)} {md_inline(c.subject)} |"
                         for c in changes[:20])
        first = changes[0]
        return Markup(f"## History\n\nLast changed {dt(first.date)} by {md_inline(first.author)}.\n\n"
                      f"| When | Who | Change |\n|---|---|---|\n{rows}\n")


def _shared(analysis: Analysis, history: dict[str, list[Change]], root: Path) -> dict[str, Any]:
    helpers = _Helpers(analysis, history, root)
    return dict(a=analysis, tags=_tags, facets=FACETS, automation_of=lambda m: by_id(m.automation),
                playbook_title=_playbook_title, incident_ref=helpers.incident_ref, record_link=helpers.record_link,
                fenced=fenced,
                history_note=helpers.history_note, kinds=field_reference(),
                source=Sources(root, analysis.records, history), tag_anchor=tag_anchor,
                playbook_target=playbook_target, candidate_anchor=candidate_anchor,
                **freshness_globals(analysis.now),
                weekly_chart=charts.weekly_stacked(analysis.trends.weeks, analysis.trends.per_week,
                                                   label="Incidents per week by layer"),
                gpu_chart=charts.horizontal_bars([(t.layer, t.gpu_hours) for t in analysis.trends.layers],
                                                 label="GPU-hours lost by layer", unit="GPU-h",
                                                 axis="GPU-hours lost"),
                stack_chart=_stack_chart(analysis), steps_chart=_steps_chart,
                mttd_chart=charts.horizontal_bars([(t.layer, t.mttd_hours) for t in analysis.trends.layers
                                                   if t.mttd_hours is not None],
                                                  label="Mean time to detect by layer", unit="h",
                                                  axis="Mean time to detect"),
                mttr_chart=charts.horizontal_bars([(t.layer, t.mttr_hours) for t in analysis.trends.layers
                                                   if t.mttr_hours is not None],
                                                  label="Mean time to resolve by layer", unit="h",
                                                  axis="Mean time to resolve"))


def _playbook_title(target: str) -> str:
    """'playbook/checkpoint-cadence.md#saving-can-fail-too' -> 'Checkpoint cadence: saving can fail too'."""
    page, _, section = target.partition("#")
    title = page.rsplit("/", 1)[-1].removesuffix(".md").replace("-", " ").capitalize()
    return f"{title}: {section.replace('-', ' ')}" if section else title


def _steps_chart(feed: Feed, *, label: str, axis: str, hours_axis: str) -> Markup:
    """A run's steps per hour over the last day; the words come from the template."""
    return charts.hourly_bars([h.start for h in feed.hours], [h.steps for h in feed.hours],
                              label=label, axis=axis, hours_axis=hours_axis)


def _stack_chart(analysis: Analysis) -> Markup:
    if analysis.stack is None:
        return Markup("")
    counts = analysis.trends.facets["layer"]
    layers = [(entry["layer"], entry["name"], counts.get(entry["layer"], 0)) for entry in analysis.stack.data["layers"]]
    return charts.stack_diagram(layers, label="The stack cross-section with this team's incidents per layer")


# Set before forking workers: (page list, template globals, output folder).
_JOB: tuple[list[tuple[int, str, Any]], dict[str, Any], Path] | None = None


def _render_range(bounds: tuple[int, int]) -> RenderResult:
    assert _JOB is not None, "set by render_pages before workers start"
    pages, shared, out_dir = _JOB
    env, result = environment(), RenderResult()
    for type_index, relative, item in pages[bounds[0]:bounds[1]]:
        template = env.get_template(PAGE_TYPES[type_index].template)
        text = shared["source"].front_matter(relative, item, template.render(item=item, **shared))
        _write_if_changed(out_dir / relative, text, result)
    return result


def render_pages(analysis: Analysis, history: dict[str, list[Change]], *, root: Path,
                 out_dir: Path, jobs: int | None = None) -> RenderResult:
    """Write every page under ``out_dir``; unchanged pages are not touched, stale ones removed."""
    global _JOB
    pages = [(i, relative, item) for i, page_type in enumerate(PAGE_TYPES)
             for relative, item in page_type.pages(analysis)]
    _JOB = (pages, shared := _shared(analysis, history, root), out_dir)
    workers = min(jobs or os.cpu_count() or 1, 2)
    result = RenderResult()
    try:
        if workers < 2 or len(pages) < PARALLEL_FROM:
            result.add(_render_range((0, len(pages))))
        else:
            step = -(-len(pages) // workers)
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                for part in pool.map(_render_range, [(i, i + step) for i in range(0, len(pages), step)]):
                    result.add(part)
    finally:
        _JOB = None
    copied = lab_pages(root)
    for relative, text in copied.items():
        _write_if_changed(out_dir / relative, shared["source"].front_matter(relative, None, text), result)
    expected = {out_dir / relative for _, relative, _ in pages} | {out_dir / r for r in copied}
    for stale in sorted(p for p in out_dir.rglob("*") if p.is_file() and p not in expected):
        stale.unlink()
        result.removed.append(str(stale))
    return result


def _write_if_changed(path: Path, text: str, result: RenderResult) -> None:
    try:
        if path.read_text(encoding="utf-8") == text:
            result.unchanged += 1
            return
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
    # Renamed into place so the live-reload server never reads half a page; no fsync, since a
    # generated page can always be rendered again from the records.
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)
    result.written.append(str(path))
