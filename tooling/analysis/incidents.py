"""Incident views: durations, repeats and relations in both directions, covering postmortems."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tooling.analysis.view import RecordView
from tooling.records.model import Record, parse_time


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
        return self.detected - self.started if self.started else None

    @property
    def time_to_resolve(self) -> timedelta | None:
        return self.resolved - self.detected if self.resolved else None

    @property
    def gpu_hours_lost(self) -> float:
        return float(self.data.get("impact", {}).get("gpu_hours_lost", 0))


def _started(data: dict[str, Any], detected: datetime) -> datetime | None:
    """When the failure began: started_at, else the earliest timeline entry before detection."""
    if "started_at" in data:
        return parse_time(data["started_at"])
    times = [t for e in data.get("timeline", []) if (t := parse_time(e.get("at"))) and t < detected]
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
