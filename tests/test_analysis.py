"""Analyses are pure functions of records and a fixed 'now': worked examples."""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import Any

from tooling.analysis import analyse
from tooling.records.model import Record

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)


def incident(n: int, **fields: Any) -> Record:
    data = {"kind": "incident", "id": f"INC-{n:04d}", "title": f"incident {n}", "run": "r1",
            "status": "resolved", "severity": "sev2", "symptom": "hang", "layer": "nccl",
            "detected_at": "2026-11-02T10:00:00+00:00", **fields}
    return Record(f"incidents/INC-{n:04d}.yaml", data)


def run(**fields: Any) -> Record:
    data = {"kind": "run", "id": "r1", "title": "Run one", "owner": "ana", "state": "running",
            "updated_at": "2026-11-29T09:00:00+00:00", **fields}
    return Record("runbooks/runs/r1.yaml", data)


SHIFTS = [
    {"person": "ana", "start": "2026-11-29T08:00:00+00:00", "end": "2026-11-29T20:00:00+00:00"},
    {"person": "ben", "start": "2026-11-29T20:00:00+00:00", "end": "2026-11-30T08:00:00+00:00", "night": True},
    {"person": "cho", "start": "2026-11-30T08:00:00+00:00", "end": "2026-11-30T20:00:00+00:00"},
]


def test_on_call_now_and_next_and_staleness() -> None:
    card = analyse([run(oncall={"members": ["ana", "ben", "cho"], "shifts": SHIFTS})], now=NOW).runs[0]
    assert (card.oncall_now.person, card.oncall_next.person) == ("ana", "ben")
    assert (card.age_hours, card.stale) == (3, False)
    later = analyse([run(oncall={"shifts": SHIFTS})], now=NOW + timedelta(hours=22)).runs[0]
    assert (later.oncall_now.person, later.oncall_next, later.stale) == ("cho", None, True)


def test_a_finished_run_is_never_stale() -> None:
    card = analyse([run(state="finished")], now=NOW + timedelta(days=30)).runs[0]
    assert card.stale is False


def test_repeats_relations_and_durations() -> None:
    records = [
        incident(1, started_at="2026-11-02T09:30:00+00:00", resolved_at="2026-11-02T16:00:00+00:00"),
        incident(2, repeat_of="INC-0001", related=["INC-0003"], detected_at="2026-11-10T10:00:00+00:00",
                 timeline=[{"at": "2026-11-10T08:00:00+00:00", "event": "first NCCL warning"}],
                 resolved_at="2026-11-10T12:00:00+00:00"),
        incident(3, status="open", layer="storage", detected_at="2026-11-20T10:00:00+00:00"),
    ]
    views = {v.id: v for v in analyse(records, now=NOW).incidents}
    assert views["INC-0001"].repeats == ["INC-0002"]
    assert views["INC-0003"].related == ["INC-0002"]  # relations show from both sides
    assert views["INC-0001"].time_to_detect == timedelta(minutes=30)
    assert views["INC-0002"].time_to_detect == timedelta(hours=2)  # earliest timeline entry
    assert views["INC-0001"].time_to_resolve == timedelta(hours=6)
    assert views["INC-0003"].time_to_resolve is None


def test_trends_per_week_and_mean_times() -> None:
    records = [
        incident(1, started_at="2026-11-02T09:00:00+00:00", resolved_at="2026-11-02T14:00:00+00:00",
                 impact={"gpu_hours_lost": 64}),
        incident(2, detected_at="2026-11-04T10:00:00+00:00", resolved_at="2026-11-04T12:00:00+00:00",
                 impact={"gpu_hours_lost": 16}),
        incident(3, layer="storage", detected_at="2026-11-17T10:00:00+00:00", impact={"gpu_hours_lost": 100}),
    ]
    trends = analyse(records, now=NOW).trends
    assert trends.weeks == [date(2026, 11, 2), date(2026, 11, 9), date(2026, 11, 16)]
    assert trends.per_week == {"nccl": [2, 0, 0], "storage": [0, 0, 1]}
    assert trends.week_totals == [2, 0, 1]
    by_layer = {t.layer: t for t in trends.layers}
    assert [t.layer for t in trends.layers] == ["storage", "nccl"]  # most GPU-hours first
    assert (by_layer["nccl"].gpu_hours, by_layer["nccl"].mttd_hours, by_layer["nccl"].mttr_hours) == (80.0, 1.0, 3.0)
    assert by_layer["storage"].mttr_hours is None
    assert trends.total.incidents == 3 and trends.facets["layer"]["nccl"] == 2


def test_action_board_flags_overdue_and_unowned_open_items() -> None:
    items = [
        {"description": "drain on Xid 79", "kind": "automate", "status": "open", "owner": "ana", "due": "2026-11-01"},
        {"description": "alert on inodes", "kind": "detect", "status": "open"},
        {"description": "atomic saves", "kind": "prevent", "status": "done", "due": "2026-10-01"},
        {"description": "watchdog", "kind": "detect", "status": "in-progress", "owner": "ben", "due": "2026-12-20"},
    ]
    pm = Record("incidents/PM-0001.yaml", {"kind": "postmortem", "id": "PM-0001", "title": "t",
                                            "incidents": ["INC-0001"], "status": "draft", "summary": "",
                                            "action_items": items})
    board = analyse([incident(1, resolved_at="2026-11-03T00:00:00+00:00"), pm], now=NOW).actions
    assert [(r.item["description"], r.overdue, r.unowned) for r in board] == [
        ("drain on Xid 79", True, False),
        ("alert on inodes", False, True),
        ("watchdog", False, False),
        ("atomic saves", False, False),  # done items are never overdue
    ]
