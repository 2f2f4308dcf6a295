"""`tooling new-incident`: file an incident at 3 a.m. in under a minute."""
from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from tooling.analysis.repeats import likely_repeats_of
from tooling.commands.prompting import Ask, fill
from tooling.errors import FieldError, UserError
from tooling.records.layout import ids
from tooling.records.schema import field_spec
from tooling.scaffold.new import new_incident
from tooling.workspace import load_analysis

FLAGS = {
    "title": "--title", "run": "--run", "severity": "--severity", "symptom": "--symptom",
    "layer": "--layer", "signatures": "--signature", "nodes": "--node", "ranks": "--rank",
    "detected_at": "--detected-at", "reported_by": "--reported-by",
}


def _asks(root: Path) -> list[Ask]:
    runs = tuple(ids(root, "run"))
    return [
        Ask("title", "--title", "Title (what broke, where, how it showed)"),
        Ask("run", "--run", "Training run", runs, runs[0] if len(runs) == 1 else None),
        Ask("severity", "--severity", "Severity", tuple(field_spec("incident", "severity")["enum"])),
        Ask("symptom", "--symptom", "Symptom", tuple(field_spec("incident", "symptom")["enum"])),
        Ask("layer", "--layer", "Layer of the cause", tuple(field_spec("incident", "layer")["enum"]), "unknown"),
    ]


def _show_likely_repeats(root: Path, now: datetime, incident_id: str) -> None:
    """Help the person filing see at once whether this failure happened before."""
    try:
        analysis = load_analysis(root, now=now)
    except UserError:
        print("(likely repeats not shown: other records do not validate; run tooling validate)", file=sys.stderr)
        return
    target = next(v for v in analysis.incidents if v.id == incident_id)
    found = likely_repeats_of(target, analysis.incidents, analysis.index)
    if not found:
        print("no earlier incident looks like this one")
        return
    titles = {v.id: v.data["title"] for v in analysis.incidents}
    print(f"likely repeats (confirm with: tooling set {incident_id} repeat_of=ID):")
    for other, why in found:
        print(f"  {other}  {why}: {titles[other]}")


def new_incident_command(*, root: Path, now: datetime, interactive: bool | None = None, **options: Any) -> int:
    values = fill(_asks(root), options, interactive=interactive)
    try:
        path = new_incident(root=root, now=now, **values)
    except FieldError as exc:
        raise exc.naming(FLAGS) from None
    print(f"created {path.relative_to(root)}")
    _show_likely_repeats(root, now, path.stem)
    return 0


def run(args: argparse.Namespace, *, root: Path, now: datetime, argv: list[str]) -> int:
    return new_incident_command(root=root, now=now, **{name: getattr(args, name) for name in FLAGS})
