"""The charts an edition's pages show, as template globals: which of the analysis each chart draws
and with which words, in the edition's language (the drawing itself is tooling.site.charts).

The trends page draws incidents per week by layer, the GPU-hours lost and the mean times to detect
and to resolve by layer, each over the window of the incidents counted; the stack page draws the
stack cross-section with this team's incidents per layer; a run card draws its steps per hour over
the last day, with the words its template gives.
"""
from __future__ import annotations

from datetime import date
from functools import partial
from typing import Any

from markupsafe import Markup

from tooling.analysis import Analysis
from tooling.analysis.feed import Feed
from tooling.site import charts
from tooling.site.i18n import ENGLISH, Edition


def template_globals(analysis: Analysis, t: Edition) -> dict[str, Any]:
    """The charts of one edition: ``analysis`` as that edition shows it, its words from ``t``."""
    layers, between = analysis.trends.layers, _between(analysis)
    return dict(weekly_chart=charts.weekly_stacked(analysis.trends.weeks, analysis.trends.per_week,
                                                   label=t.gettext("Incidents per week by layer"), t=t),
                gpu_chart=charts.horizontal_bars([(x.layer, x.gpu_hours) for x in layers],
                                                 label=t.gettext("GPU-hours lost by layer"), unit=t.gettext("GPU-h"),
                                                 axis=t.gettext("GPU-hours lost"), between=between, t=t),
                stack_chart=_stack_chart(analysis, t), steps_chart=partial(_steps_chart, t=t),
                mttd_chart=charts.horizontal_bars([(x.layer, x.mttd_hours) for x in layers if x.mttd_hours is not None],
                                                  label=t.gettext("Mean time to detect by layer"), unit=t.gettext("h"),
                                                  axis=t.gettext("Mean time to detect"), between=between, t=t),
                mttr_chart=charts.horizontal_bars([(x.layer, x.mttr_hours) for x in layers if x.mttr_hours is not None],
                                                  label=t.gettext("Mean time to resolve by layer"), unit=t.gettext("h"),
                                                  axis=t.gettext("Mean time to resolve"), between=between, t=t))


def _steps_chart(feed: Feed, *, label: str, axis: str, hours_axis: str, t: Edition = ENGLISH) -> Markup:
    """A run's steps per hour over the last day; the words come from the template."""
    return charts.hourly_bars([h.start for h in feed.hours], [h.steps for h in feed.hours],
                              label=label, axis=axis, hours_axis=hours_axis, t=t)


def _between(analysis: Analysis) -> tuple[date, date] | None:
    """The first and the last day of the incidents the layer charts count (oldest first)."""
    found = analysis.incidents
    return (found[0].detected.date(), found[-1].detected.date()) if found else None


def _stack_chart(analysis: Analysis, t: Edition) -> Markup:
    if analysis.stack is None:
        return Markup("")
    counts = analysis.trends.facets["layer"]
    layers = [(entry["layer"], entry["name"], counts.get(entry["layer"], 0)) for entry in analysis.stack.data["layers"]]
    return charts.stack_diagram(layers, label=t.gettext("The stack cross-section with this team's incidents per layer"),
                                between=_between(analysis), t=t)
