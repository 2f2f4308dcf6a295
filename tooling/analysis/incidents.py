"""Incident views: durations, repeats and relations in both directions, covering postmortems."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tooling.analysis.view import RecordView
from tooling.records.model import Record, parse_time, precision


# The fields the incident log is tagged and filtered by, and the trends count.
FACETS = ("run", "layer", "symptom", "severity", "status")


@dataclass
class IncidentView(RecordView):
    record: Record
    detected: datetime
    started: datetime | None
    resolved: datetime | None
    repeat_of: str | None
    repeats: list[str] = field(default_factory=list)
    related: list[str] = field(default_factory=list)
    postmortems: list[str] = field(default_factory=list)

    @property
    def time_to_detect(self) -> timedelta | None:
        exact = self.started and self._exact("detected_at") and self._exact("started_at", "timeline")
        return self.detected - self.started if exact and self.started else None

    @property
    def time_to_resolve(self) -> timedelta | None:
        exact = self.resolved and self._exact("detected_at") and self._exact("resolved_at")
        return self.resolved - self.detected if exact and self.resolved else None

    def _exact(self, field: str, fallback: str | None = None) -> bool:
        """Durations only between timestamps: 2022-06 minus 2022-05 says nothing in hours."""
        if field in self.data:
            return precision(self.data[field]) == "time"
        return fallback is not None  # a start taken from the timeline is checked there

    @property
    def occurrences(self) -> int:
        """How many failures this record stands for (a summary of a recurring problem: more than 1)."""
        return int(self.data.get("occurrences", 1))

    def facet(self, name: str) -> str:
        """The incident's value for one of FACETS (its run, or its cluster for the run facet)."""
        return self.where if name == "run" else str(self.data[name])

    @property
    def where(self) -> str:
        return where_of(self.data)

    @property
    def gpu_hours_lost(self) -> float:
        return float(self.data.get("impact", {}).get("gpu_hours_lost", 0))


def where_of(data: dict[str, Any]) -> str:
    """The run an incident hit, or ``cluster NAME`` for an incident of scope cluster."""
    return str(data.get("run") or f"cluster {data.get('cluster', '?')}")


def _started(data: dict[str, Any], detected: datetime) -> datetime | None:
    """When the failure began: started_at, else the earliest timeline entry before detection."""
    if "started_at" in data:
        return parse_time(data["started_at"])
    times = [t for e in data.get("timeline", []) if precision(e.get("at")) == "time"
             and (t := parse_time(e.get("at"))) and t < detected]
    return min(times) if times else None


def incident_views(records: list[Record]) -> list[IncidentView]:
    """Incidents in detection order, each knowing its repeats, relations and postmortems."""
    views: dict[str, IncidentView] = {}
    for record in records:
        if record.kind != "incident":
            continue
        detected = parse_time(record.data["detected_at"])
        assert detected is not None, "validated records have real timestamps"
        views[record.id] = IncidentView(
            record, detected, _started(record.data, detected),
            parse_time(record.data.get("resolved_at")), record.data.get("repeat_of"),
            related=list(record.data.get("related", [])))
    back: dict[str, set[str]] = defaultdict(set)
    for view in views.values():
        if view.repeat_of in views:
            views[view.repeat_of].repeats.append(view.id)
        for other in view.related:
            back[other].add(view.id)
    for incident_id, sources in back.items():
        if incident_id in views:
            view = views[incident_id]
            view.related = sorted(set(view.related) | sources)
    for record in records:
        if record.kind == "postmortem":
            for incident_id in record.data.get("incidents", []):
                if incident_id in views:
                    views[incident_id].postmortems.append(record.id)
    return sorted(views.values(), key=lambda v: (v.detected, v.id))
