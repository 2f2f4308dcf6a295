"""Trends across incidents: per week by layer, GPU-hours lost per layer, time to detect and resolve."""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, timedelta
from statistics import mean

from tooling.analysis.incidents import FACETS, IncidentView


MAX_WEEKS = 104  # the weekly chart shows two years, ending at the latest incident


@dataclass(frozen=True)
class LayerTimes:
    layer: str
    incidents: int
    gpu_hours: float
    mttd_hours: float | None
    mttr_hours: float | None


@dataclass(frozen=True)
class Trends:
    weeks: list[date]  # Mondays, consecutive, oldest first; at most MAX_WEEKS
    per_week: dict[str, list[int]]  # layer -> incidents in each week
    layers: list[LayerTimes]  # most GPU-hours lost first
    total: LayerTimes
    facets: dict[str, Counter[str]]  # run, layer, symptom, severity, status -> counts

    @property
    def week_totals(self) -> list[int]:
        return [sum(column) for column in zip(*self.per_week.values())]


def _hours(values: list[timedelta]) -> float | None:
    return round(mean(v.total_seconds() for v in values) / 3600, 1) if values else None


def _times(layer: str, views: list[IncidentView]) -> LayerTimes:
    return LayerTimes(
        layer, len(views), round(sum(v.gpu_hours_lost for v in views), 1),
        _hours([t for v in views if (t := v.time_to_detect) is not None]),
        _hours([t for v in views if (t := v.time_to_resolve) is not None]))


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def trends(incidents: list[IncidentView]) -> Trends:
    by_layer: dict[str, list[IncidentView]] = defaultdict(list)
    for view in incidents:
        by_layer[view.data["layer"]].append(view)
    weeks: list[date] = []
    if incidents:
        first, last = _monday(incidents[0].detected.date()), _monday(incidents[-1].detected.date())
        span = min((last - first).days // 7 + 1, MAX_WEEKS)
        weeks = [last - timedelta(weeks=span - 1 - i) for i in range(span)]
    index = {week: i for i, week in enumerate(weeks)}
    per_week: dict[str, list[int]] = {layer: [0] * len(weeks) for layer in sorted(by_layer)}
    for view in incidents:
        week = index.get(_monday(view.detected.date()))
        if week is not None:  # older than the window: counted in the totals, not drawn
            per_week[view.data["layer"]][week] += 1
    layers = sorted((_times(layer, views) for layer, views in by_layer.items()),
                    key=lambda t: (-t.gpu_hours, t.layer))
    facets = {name: Counter(v.facet(name) for v in incidents) for name in FACETS}
    return Trends(weeks, per_week, layers, _times("all layers", incidents), facets)
