"""Rendering pages with jinja2: templates lay out what analyses computed, nothing more.

Each page is rendered once per edition of the site (tooling.site.i18n): ``P.md`` in English and,
when mkdocs.yml asks for Korean, ``P.ko.md`` beside it, from the same analysis with the Korean
catalogue installed. Large sites render in two processes (forked, so the analysis is shared
without pickling); a page is written only when its text changed, and pages of removed records
are deleted.

Every page of every edition is rendered, in memory, before the first one is written
(tooling.site.page_files): a page that fails to render leaves docs/generated/ as it was.
"""
from __future__ import annotations

import multiprocessing
import os
import posixpath
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from markupsafe import Markup

from tooling.analysis import Analysis
from tooling.catalogue.automations import by_id
from tooling.catalogue.examples import examples_of
from tooling.analysis.incidents import FACETS, IncidentView
from tooling.records.model import Record
from tooling.site.config import SiteConfig
from tooling.site.escape import link, md_inline
from tooling.site.fences import fenced
from tooling.site.filters import code, dt, environment
from tooling.site.i18n import ENGLISH, Edition, edition, site_languages
from tooling.site.overlays import localised
from tooling.site.page_files import Rendered, RenderResult, remove_stale, write_all
from tooling.site.words import template_words
from tooling.site.freshness import template_globals as freshness_globals
from tooling.site.history import Change
from tooling.site.labs import lab_pages
from tooling.site.pages import PAGE_TYPES, RECORD_PAGES
from tooling.site.links import LISTED, MODE_FACET, candidate_anchor, mode_tag, playbook_target, tag_anchor, tag_id
from tooling.site.lookup import lookup_json
from tooling.site.source import Sources
from tooling.site.reference import field_reference
from tooling.site.response import template_globals as response_globals
from tooling.site.rerender import Rerender, templates_stamp
from tooling.site.trend_charts import template_globals as chart_globals

PARALLEL_FROM = 300  # pages; below this a second process costs more than it saves
TEMPLATES = Path(__file__).parent / "templates"


# The tag of each failure mode an incident shows (its own, and those its signatures name): the
# search gives tags the heaviest weight (mkdocs-material: 1,000,000 to a title's 1,000), so
# "fell off the bus" ranks the incidents of that failure above those that mention the words.
TAG_FACETS = (*FACETS, MODE_FACET)  # the tags page's groups, in this order


def _tags(view: IncidentView, analysis: Analysis) -> list[str]:
    """An incident page's tags: its facets, then its failure modes."""
    identity = analysis.identities.get(view.id)
    own = [identity.mode] if identity is not None and identity.mode is not None else []
    modes = [*own, *analysis.links.seen.get(view.id, [])]
    return [f"{facet}: {view.facet(facet)}" for facet in FACETS] + [f"{MODE_FACET}: {m.title}" for m in modes]


def _tag_groups(analysis: Analysis) -> list[tuple[str, list[str]]]:
    """The tags page's sections: each facet (TAG_FACETS' order) with its tags, by name."""
    names = {tag for view in analysis.incidents for tag in _tags(view, analysis)}
    groups = [(facet, sorted(n for n in names if n.startswith(f"{facet}: "))) for facet in TAG_FACETS]
    return [(facet, found) for facet, found in groups if found]


class _Helpers:
    """Per-build template globals that need the analysis or the git history."""

    def __init__(self, analysis: Analysis, history: dict[str, list[Change]], root: Path, t: Edition) -> None:
        self.titles = {v.id: v.data["title"] for v in analysis.incidents}
        self.history = history
        self.root = root
        self.t = t
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
        return Markup(f"{md_inline(title)} ") + self.gettext("(%(path)s in the repository)", path=code(shown))

    def gettext(self, message: str, **values: Any) -> Markup:
        """A message of this edition with markdown values filled in (each escaped already)."""
        return Markup(self.t.gettext(message)) % values

    def incident_ref(self, incident_id: str) -> Markup:
        return link(f"{incident_id} {self.titles.get(incident_id, '')}".strip(), f"{incident_id}.md")

    def changes(self, record: Record) -> list[Change]:
        """The record's commits, newest first (none while it is not committed)."""
        return self.history.get(os.path.normpath(os.path.abspath(record.path)), [])

    def history_note(self, record: Record) -> Markup:
        changes = self.changes(record)
        heading = self.gettext("History")
        if not changes:
            note = self.gettext("This record is not committed to git yet.")
            return Markup(f"## {heading}\n\n*{note}*\n")
        rows = "\n".join(f"| {dt(c.date, t=self.t)} | {md_inline(c.author)} | {code(c.sha)} "
                          f"{md_inline(c.subject)} |" for c in changes[:20])
        first = changes[0]
        last = self.gettext("Last changed %(when)s by %(who)s.", when=dt(first.date, t=self.t),
                            who=md_inline(first.author))
        columns = " | ".join([self.gettext("When"), self.gettext("Who"), self.gettext("Change")])
        return Markup(f"## {heading}\n\n{last}\n\n| {columns} |\n|---|---|---|\n{rows}\n")


def _shared(analysis: Analysis, history: dict[str, list[Change]], root: Path, sources: Sources,
            t: Edition = ENGLISH) -> dict[str, Any]:
    """The template globals of one edition: ``analysis`` as that edition shows it (see
    tooling.site.overlays), its words, its charts (tooling.site.trend_charts)."""
    helpers = _Helpers(analysis, history, root, t)
    return dict(a=analysis, tags=partial(_tags, analysis=analysis), facets=FACETS, tag_groups=_tag_groups,
                automation_of=lambda m: by_id(m.automation),
                incident_ref=helpers.incident_ref, record_link=helpers.record_link, changes=helpers.changes,
                fenced=fenced, history_note=helpers.history_note, kinds=field_reference(),
                source=sources, tag_anchor=tag_anchor, tag_slug=tag_id, mode_tag=mode_tag, listed=LISTED,
                playbook_target=playbook_target, candidate_anchor=candidate_anchor, lookup_data=lookup_json,
                examples_of=examples_of,
                **freshness_globals(analysis.now, t), **template_words(t, root), **response_globals(t),
                **chart_globals(analysis, t))


@dataclass(frozen=True)
class _Edition:
    """What a worker needs to render one edition's pages."""

    lang: str
    pages: list[tuple[int, str, Any]]  # (page type, path of the English page, item)
    shared: dict[str, Any]
    todo: list[tuple[int, str, Any]]  # the pages to render: all, but under `tooling serve` (rerender.py)


# Set before forking workers: (every edition, output folder).
_JOB: tuple[list[_Edition], Path] | None = None


def _render_range(bounds: tuple[int, int]) -> Rendered:
    """Pages ``bounds`` of the list of every edition's pages, one edition after the other."""
    assert _JOB is not None, "set by render_pages before workers start"
    editions, out_dir = _JOB
    result, first = Rendered(), 0
    for job in editions:
        chosen = job.todo[max(bounds[0] - first, 0):max(bounds[1] - first, 0)]
        first += len(job.todo)
        if not chosen:
            continue
        t = edition(job.lang)
        env, source = environment(t), job.shared["source"]
        for type_index, relative, item in chosen:
            template = env.get_template(PAGE_TYPES[type_index].template)
            # the front matter is decided by the English page's path: the same for every edition
            text = source.front_matter(relative, item, template.render(item=item, **job.shared))
            result.add(out_dir / t.page(relative), text)
    return result


def render_pages(analysis: Analysis, history: dict[str, list[Change]], *, root: Path, out_dir: Path,
                 site: SiteConfig, jobs: int | None = None, languages: tuple[str, ...] | None = None,
                 rerender: Rerender | None = None) -> RenderResult:
    """Write every page of every edition under ``out_dir`` (``languages``: by default those
    mkdocs.yml asks for; ``site``: mkdocs.yml as the build read it); unchanged pages are not
    touched, stale ones removed. ``rerender``: what `tooling serve`'s last render was made
    from, so that pages made from the same are not rendered again."""
    global _JOB
    sources = Sources(root, analysis.records, history, site)
    editions = []
    if rerender is not None:
        rerender.begin(templates_stamp(TEMPLATES))
    for lang in languages or site_languages(site.data):
        t = edition(lang)
        shown = localised(analysis, t)  # the same analysis, with translated ladders and stack
        pages = [(i, relative, item) for i, page_type in enumerate(PAGE_TYPES)
                 for relative, item in page_type.pages(shown.analysis)]
        shared = {**_shared(shown.analysis, history, root, sources, t), "untranslated": shown.untranslated,
                  "untranslated_ladders": shown.missing_ids("ladder")}
        todo = pages if rerender is None else [
            (i, relative, item) for i, relative, item in pages
            if rerender.needed(out_dir / t.page(relative), PAGE_TYPES[i].template, item, shared)]
        editions.append(_Edition(lang, pages, shared, todo))
    _JOB = (editions, out_dir)
    total = sum(len(e.todo) for e in editions)
    workers = min(jobs or os.cpu_count() or 1, 2)
    rendered = Rendered()
    try:
        if workers < 2 or total < PARALLEL_FROM:
            rendered.merge(_render_range((0, total)))
        else:
            step = -(-total // workers)
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                for part in pool.map(_render_range, [(i, i + step) for i in range(0, total, step)]):
                    rendered.merge(part)
    finally:
        _JOB = None
    copied = lab_pages(root)
    for relative, text in copied.items():
        rendered.add(out_dir / relative, sources.front_matter(relative, None, text))
    result = write_all(rendered)
    result.unchanged += sum(len(e.pages) - len(e.todo) for e in editions)
    if rerender is not None:
        rerender.written()
    expected = {out_dir / edition(e.lang).page(relative) for e in editions for _, relative, _ in e.pages}
    result.removed = remove_stale(out_dir, expected | {out_dir / r for r in copied})
    return result
