"""`tooling new-postmortem INCIDENT-ID...`: a blameless postmortem draft."""
from __future__ import annotations

from pathlib import Path

from tooling.scaffold.new import new_postmortem


def new_postmortem_command(incidents: list[str], *, root: Path, title: str | None,
                           authors: list[str] | None) -> int:
    path = new_postmortem(root=root, incidents=incidents, title=title, authors=authors)
    print(f"created {path.relative_to(root)}")
    return 0
