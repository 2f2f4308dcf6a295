"""The record kinds: which schema applies, where files live, how ids look."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    name: str
    directory: str  # relative to the repository root
    id_prefix: str  # "" for kinds whose id is a free slug
    description: str

    @property
    def schema_file(self) -> str:
        return f"{self.name}.schema.json"


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("incident", "incidents", "INC-", "one failure of a training run"),
        Kind("postmortem", "incidents", "PM-", "a blameless postmortem of incidents"),
        Kind("run", "runbooks/runs", "", "the live wiki page of a training run"),
        Kind("ladder", "runbooks/ladders", "", "a diagnostic ladder for one symptom"),
        Kind("stack", "runbooks", "", "the stack cross-section: layers, failure modes, cheapest checks"),
    )
}

# Folders (relative to the repository root) that hold records; validated by default.
RECORD_DIRS: tuple[str, ...] = ("incidents", "runbooks")
