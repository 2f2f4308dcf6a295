"""`tooling new-incident`: file an incident at 3 a.m. in under a minute."""
from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tooling.analysis.repeats import likely_repeats_of
from tooling.commands.prompting import Ask, fill
from tooling.errors import UserError
from tooling.records.schema import schema_for
from tooling.scaffold.new import existing_ids, new_incident
from tooling.workspace import load_analysis


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


def _show_likely_repeats(root: Path, incident_id: str) -> None:
    """Help the person filing see at once whether this failure happened before."""
    try:
        analysis = load_analysis(root, now=datetime.now(timezone.utc))
    except UserError:
        print("(likely repeats not shown: other records do not validate; run tooling validate)", file=sys.stderr)
        return
    target = next(v for v in analysis.incidents if v.id == incident_id)
    found = likely_repeats_of(target, analysis.incidents)
    if not found:
        print("no earlier incident looks like this one")
        return
    titles = {v.id: v.data["title"] for v in analysis.incidents}
    print(f"likely repeats (confirm with: tooling set {incident_id} repeat_of=ID):")
    for other, why in found:
        print(f"  {other}  {why}: {titles[other]}")


def new_incident_command(*, root: Path, interactive: bool | None = None, **options: Any) -> int:
    values = fill(_asks(root), options, interactive=interactive)
    path = new_incident(root=root, **values)
    print(f"created {path.relative_to(root)}")
    _show_likely_repeats(root, path.stem)
    return 0
