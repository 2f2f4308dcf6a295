"""Postmortem views and the action-item board across all postmortems."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from tooling.analysis.incidents import IncidentView
from tooling.analysis.view import RecordView
from tooling.records.model import Record

CLOSED = ("done", "wont-do")


@dataclass(frozen=True)
class ActionItemRow:
    postmortem: str
    index: int
    item: dict[str, Any]
    overdue: bool
    unowned: bool

    @property
    def open(self) -> bool:
        return self.item["status"] not in CLOSED


@dataclass(frozen=True)
class PostmortemView(RecordView):
    record: Record
    incidents: list[IncidentView]
    items: list[ActionItemRow]


def _items(record: Record, today: date) -> list[ActionItemRow]:
    rows = []
    for i, item in enumerate(record.data.get("action_items", [])):
        due = date.fromisoformat(item["due"]) if "due" in item else None
        is_open = item["status"] not in CLOSED
        rows.append(ActionItemRow(record.id, i + 1, item,
                                  overdue=bool(is_open and due and due < today),
                                  unowned=is_open and not item.get("owner")))
    return rows


def postmortem_views(records: list[Record], incidents: list[IncidentView], *,
                     now: datetime) -> list[PostmortemView]:
    by_id = {view.id: view for view in incidents}
    views = [PostmortemView(r, [by_id[i] for i in r.data["incidents"] if i in by_id], _items(r, now.date()))
             for r in records if r.kind == "postmortem"]
    return sorted(views, key=lambda v: v.id)


def action_board(postmortems: list[PostmortemView]) -> list[ActionItemRow]:
    """Open items first (overdue, then unowned, then by due date), closed ones after."""
    rows = [row for view in postmortems for row in view.items]
    return sorted(rows, key=lambda r: (not r.open, not r.overdue, not r.unowned,
                                       r.item.get("due", "9999-12-31"), r.postmortem, r.index))
