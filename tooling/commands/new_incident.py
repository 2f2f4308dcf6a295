"""`tooling new-incident`: file an incident at 3 a.m. in under a minute."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tooling.commands.prompting import Ask, fill
from tooling.records.schema import schema_for
from tooling.scaffold.new import existing_ids, new_incident


def _choices(field: str) -> tuple[str, ...]:
    spec = schema_for("incident")["properties"][field]
    if "$ref" in spec:
        spec = schema_for("incident")["$defs"][spec["$ref"].rsplit("/", 1)[-1]]
    return tuple(spec["enum"])


def _asks(root: Path) -> list[Ask]:
    runs = tuple(existing_ids(root, "run"))
    return [
        Ask("title", "--title", "Title (what broke, where, how it showed)"),
        Ask("run", "--run", "Training run", runs, runs[0] if len(runs) == 1 else None),
        Ask("severity", "--severity", "Severity", _choices("severity")),
        Ask("symptom", "--symptom", "Symptom", _choices("symptom")),
        Ask("layer", "--layer", "Layer of the cause", _choices("layer"), "unknown"),
    ]


def new_incident_command(*, root: Path, interactive: bool | None = None, **options: Any) -> int:
    values = fill(_asks(root), options, interactive=interactive)
    path = new_incident(root=root, **values)
    print(f"created {path.relative_to(root)}")
    return 0
