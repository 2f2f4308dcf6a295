"""Run cards for the training wiki: state, progress, staleness, on-call now and next."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tooling.analysis.budget import Budget, compute
from tooling.analysis.feed import Feed, feed_of
from tooling.analysis.incidents import IncidentView
from tooling.analysis.paging import ladder_for
from tooling.analysis.status import RunStatus, status_of
from tooling.analysis.view import RecordView
from tooling.records.model import Record, parse_time
from tooling.records.runs import is_live, rotation

STALE_AFTER = timedelta(hours=24)  # the wiki page of a live run is updated at least daily


@dataclass(frozen=True)
class Shift:
    person: str
    start: datetime
    end: datetime
    night: bool


@dataclass(frozen=True)
class RunCard(RecordView):
    record: Record
    age: timedelta
    stale: bool
    progress_pct: float | None
    oncall_now: Shift | None
    oncall_next: Shift | None
    known_issues: list[tuple[dict[str, Any], IncidentView | None]]
    open_incidents: list[IncidentView] = field(default_factory=list)
    budget: Budget | None = None
    feed: Feed | None = None  # None: the run has no machine feed, and its page shows none
    status: RunStatus | None = None  # the status strip's line and the first-response commands

    @property
    def age_hours(self) -> int:
        return int(self.age.total_seconds() // 3600)


def shifts(run: dict[str, Any]) -> list[Shift]:
    out = []
    for s in run.get("oncall", {}).get("shifts", []):
        start, end = parse_time(s["start"]), parse_time(s["end"])
        assert start is not None and end is not None, "validated records have real timestamps"
        out.append(Shift(s["person"], start, end, bool(s.get("night", False))))
    return sorted(out, key=lambda s: s.start)


def oncall(run: dict[str, Any], now: datetime) -> tuple[Shift | None, Shift | None]:
    """The shift holding the pager at ``now`` and the one after it."""
    ordered = shifts(run)
    current = next((s for s in ordered if s.start <= now < s.end), None)
    after = current.end if current else now
    upcoming = next((s for s in ordered if s.start >= after and s is not current), None)
    return current, upcoming


def _progress(run: dict[str, Any]) -> float | None:
    progress = run.get("progress", {})
    if "step" in progress and "total_steps" in progress:
        return min(100.0, 100.0 * progress["step"] / progress["total_steps"])
    return None


def run_cards(records: list[Record], incidents: list[IncidentView], *, now: datetime) -> list[RunCard]:
    by_id = {view.id: view for view in incidents}
    hang = ladder_for("hang", [r for r in records if r.kind == "ladder"])
    cards = []
    for record in sorted((r for r in records if r.kind == "run"), key=lambda r: r.id):
        updated = parse_time(record.data["updated_at"])
        assert updated is not None, "validated records have real timestamps"
        age = now - updated
        live = is_live(record.data)
        current, upcoming = oncall(record.data, now)
        opened = [v for v in incidents if v.data.get("run") == record.id and v.data["status"] != "resolved"]
        feed = feed_of(record.data, now=now, live=live, incidents=by_id, hang_ladder=hang.id if hang is not None else None)
        cards.append(RunCard(
            record, age, stale=live and age > STALE_AFTER, progress_pct=_progress(record.data),
            oncall_now=current, oncall_next=upcoming,
            known_issues=[(item, by_id.get(item["incident"])) for item in record.data.get("known_issues", [])],
            open_incidents=opened,
            budget=compute(record.data["budget"], rotation_size=len(rotation(record.data)))
            if "budget" in record.data else None,
            feed=feed, status=status_of(record.data, feed, opened, now=now)))
    return cards
