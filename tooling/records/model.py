"""Plain records after loading: data plus the file they came from, and typed helpers."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Record:
    path: str
    data: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.data["kind"])

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def stem(self) -> str:
        return Path(self.path).name.rsplit(".", 1)[0]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)


def parse_time(text: Any) -> datetime | None:
    """An aware datetime from a schema-checked timestamp or date string; None if not real."""
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return None
