"""The record kinds: which schema applies, where files live, how ids look."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    name: str
    directory: str  # relative to the repository root
    id_prefix: str  # "" for kinds whose id is a free slug
    # An overlay: the text of a record of this kind in another language, in <id>.<lang>.yaml
    # beside it (tooling/records/overlays.py). Not addressable by id on the command line.
    translates: str | None = None

    @property
    def schema_file(self) -> str:
        return f"{self.name}.schema.json"


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("incident", "incidents", "INC-"),
        Kind("postmortem", "incidents", "PM-"),
        Kind("run", "runbooks/runs", ""),
        Kind("ladder", "runbooks/ladders", ""),
        Kind("stack", "runbooks", ""),
        Kind("ladder-overlay", "runbooks/ladders", "", translates="ladder"),
        Kind("stack-overlay", "runbooks", "", translates="stack"),
    )
}


def is_kind(value: object) -> bool:
    """A known kind's name; ``kind: [incident]`` (a list, unhashable) is not one, and no error."""
    return isinstance(value, str) and value in KINDS


def _outermost(directories: list[str]) -> tuple[str, ...]:
    """The folders not inside another one of them: walking these finds every kind's files."""
    return tuple(sorted(d for d in set(directories)
                        if not any(d != o and d.startswith(o + "/") for o in directories)))


# Folders (relative to the repository root) that hold records; validated by default.
RECORD_DIRS: tuple[str, ...] = _outermost([k.directory for k in KINDS.values()])
