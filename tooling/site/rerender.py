"""What a render of `tooling serve` need not do again: the page of an incident whose inputs are
those it was last rendered from, its file as that render left it.

An incident's page shows its record and a few facts of others (the titles of the incidents it
repeats or relates to, its postmortems, its failure mode, the pages its links lead to, its
history), all named in :func:`incident_inputs`. With a thousand incidents, rendering every page
again for one edited record was most of the time an edit took to reach the browser; the pages
drawn from many records are rendered again when what they show of them changed (the log, the
ladders: :func:`log_inputs`, :func:`ladder_inputs`) or every time (tags, trends, runs).
tests/test_rerender.py renders with and without this after edits of each kind and compares
every page, and checks that incident.md.j2 reads nothing from outside its record that
:func:`incident_inputs` does not name.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from tooling.analysis.incidents import IncidentView

Stamp = tuple[int, int, int] | None


def incident_inputs(view: IncidentView, shared: dict[str, Any], common: dict[str, str]) -> str:
    """Everything incident.md.j2 shows, as text: equal text, equal page. ``common``: the part
    every edition shares, by incident id, worked out once per render (``{}`` to start one)."""
    record = view.record
    known = common.get(view.id)
    if known is None:
        who = shared["a"].identities.get(view.id)
        others = [other for other in (view.repeat_of, *view.repeats, *view.related) if other]
        mode = who.mode if who is not None else None
        known = repr((record.data, view.detected, view.started, view.resolved, view.repeat_of, view.repeats,
                      view.related, view.postmortems, mode and (mode.id, mode.title),
                      [shared["incident_ref"](o) for o in others],
                      shared["source"](record), shared["changes"](record)))  # the history note's changes
        common[view.id] = known
    # the edition's own: a link to a file outside the site is worded in its language
    links = [shared["record_link"](link.get("title"), link.get("url"), record, "incidents")
             for link in record.data.get("links") or [] if isinstance(link, dict)]
    # its ladder step and the other modes its signatures show (a.links), in the edition's words
    place = shared["a"].links.places.get(view.id)
    ladder = place and (place.ladder.id, place.ladder.data.get("title"), place.step, place.step_name)
    seen = [(mode.id, mode.title) for mode in shared["a"].links.seen.get(view.id, [])]
    return known + repr((links, ladder, seen))


def log_inputs(item: Any, shared: dict[str, Any], common: dict[str, str]) -> str:
    """What incident_log.md.j2 shows: each incident's row and tags, and the counts of each facet;
    and the page's date, the newest change of any record (tooling.site.source)."""
    a, tags = shared["a"], shared["tags"]
    rows = [(v.id, v.data.get("detected_at"), v.detected, v.data.get("title"), v.where, v.data.get("layer"),
             v.data.get("symptom"), v.data.get("severity"), v.data.get("status"), v.gpu_hours_lost,
             v.time_to_resolve, tags(v)) for v in a.incidents]
    facets = {facet: a.trends.facets[facet].most_common() for facet in shared["facets"]}
    return repr((rows, facets, shared["source"].newest))


def ladder_inputs(item: Any, shared: dict[str, Any], common: dict[str, str]) -> str:
    """What ladder.md.j2 shows: the ladder as this edition has it (translated or not), where its
    record lives, its history, and its past incidents (when, which, at which step, their fix and
    postmortems)."""
    past = shared["a"].links.past[item.id]
    listed = [(p.view.id, p.view.data.get("title"), p.view.detected, p.step, p.fix, p.postmortems)
              for p in past.incidents]
    by_step = {step: [p.view.id for p in found] for step, found in past.by_step.items()}
    return repr((item.data, shared["untranslated"](item), shared["source"](item), shared["changes"](item), listed,
                 by_step))


# The page types rendered again only when their inputs change, by template.
INPUTS: dict[str, Callable[[Any, dict[str, Any], dict[str, str]], str]] = {
    "incident.md.j2": incident_inputs, "incident_log.md.j2": log_inputs, "ladder.md.j2": ladder_inputs}


def _stamp(path: Path) -> Stamp:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size, stat.st_ino


def templates_stamp(folder: Path) -> tuple[Any, ...]:
    """The templates as they are now: an edited template renders its pages again."""
    return tuple(sorted((name, _stamp(folder / name)) for name in os.listdir(folder)))


class Rerender:
    """The inputs each incident page was last rendered from, kept by `tooling serve` from one
    render to the next."""

    def __init__(self) -> None:
        self.rendered: dict[Path, tuple[str, Stamp]] = {}
        self.pending: dict[Path, str] = {}
        self.skipped = 0  # pages the last render did not render again
        self.templates = ""  # the templates as this render found them
        self.common: dict[str, str] = {}  # this render's inputs shared by every edition (incident_inputs)

    def begin(self, templates: tuple[Any, ...]) -> None:
        """A render starts (``templates``: templates_stamp): nothing of a render that failed is kept."""
        self.pending, self.skipped, self.templates, self.common = {}, 0, repr(templates), {}

    def needed(self, path: Path, template: str, item: Any, shared: dict[str, Any]) -> bool:
        """Whether the page at ``path`` must be rendered; what it is rendered from is noted,
        and kept by :meth:`written` once the render's pages are on disk."""
        inputs = INPUTS.get(template)
        if inputs is None:
            return True
        digest = self.templates + inputs(item, shared, self.common)
        self.pending[path] = digest
        last = self.rendered.get(path)
        needed = last is None or last[1] is None or last != (digest, _stamp(path))
        self.skipped += not needed
        return needed

    def written(self) -> None:
        """The render's pages are on disk: what they were rendered from is kept."""
        self.rendered = {path: (digest, _stamp(path)) for path, digest in self.pending.items()}
        self.pending, self.common = {}, {}
