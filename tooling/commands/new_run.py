"""`tooling new-run NAME`: the live wiki page of a new training run."""
from __future__ import annotations

from pathlib import Path

from tooling.scaffold.new import new_run


def new_run_command(name: str, *, root: Path, title: str | None, owner: str | None) -> int:
    path = new_run(root=root, name=name, title=title, owner=owner)
    print(f"created {path.relative_to(root)}")
    return 0
