"""The common face of every analysed record: its id and its data, read from the record."""
from __future__ import annotations

from typing import Any

from tooling.records.model import Record


class RecordView:
    record: Record

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def data(self) -> dict[str, Any]:
        return self.record.data
