"""`tooling new-incident`: file an incident at 3 a.m. in under a minute.

With --from-log FILE the log is scanned as `tooling scan` does, and one incident is filed per
distinct failure in it: the log fills title, symptom, layer, signatures, nodes, ranks, detected_at
and failure mode; flags given override those for every incident; what a log cannot say (the run,
the severity) is asked for or taken from its flag, all before anything is written.
"""
from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from tooling.analysis.likely import NOT_SHOWN, LikelyRepeats
from tooling.commands.prompting import Ask, fill
from tooling.errors import FieldError, UserError
from tooling.logs.chunks import display
from tooling.logs.drafts import Draft
from tooling.logs.scan import scan_logs
from tooling.records.layout import ids
from tooling.records.schema import field_spec
from tooling.writers.filing import file_all, incident_values, summary
from tooling.writers.scaffold import new_incident, require_run

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


def _show_likely_repeats(likely: LikelyRepeats, incident_id: str) -> None:
    """Help the person filing see at once whether this failure happened before."""
    lines = likely.lines(incident_id)
    if lines is None:
        print(NOT_SHOWN, file=sys.stderr)
    else:
        print("\n".join(lines))


def new_incident_command(*, root: Path, now: datetime, interactive: bool | None = None, **options: Any) -> int:
    values = fill(_asks(root), options, interactive=interactive)
    try:
        path = new_incident(root=root, now=now, **values)
    except FieldError as exc:
        raise exc.naming(FLAGS) from None
    print(f"created {path.relative_to(root)}")
    _show_likely_repeats(LikelyRepeats(root, now), path.stem)
    return 0


def from_log_command(*, root: Path, now: datetime, log: Path, interactive: bool | None = None,
                     **options: Any) -> int:
    if options.get("run"):  # a wrong run is said before the log is read, not after
        try:
            require_run(root, options["run"])
        except FieldError as exc:
            raise exc.naming(FLAGS) from None
    result = scan_logs([log], now=now)
    if not result.drafts:
        lines = result.logs[0].lines
        raise UserError(f"{display(log)}: no failure recognised in its {lines} line{'s' if lines != 1 else ''}; "
                        "nothing filed (file it without --from-log)")
    try:
        created = file_all(_incidents(root, result.drafts, options, interactive), root=root, now=now)
    except FieldError as exc:
        raise exc.naming(FLAGS) from None
    likely = LikelyRepeats(root, now)  # one analysis for every incident filed
    for path in created:
        print(f"created {path.relative_to(root)}")
        _show_likely_repeats(likely, path.stem)
    return 0


def _incidents(root: Path, drafts: list[Draft], options: dict[str, Any], interactive: bool | None) -> list[dict[str, Any]]:
    """The values of each incident: the log's, overridden by the flags given; the run asked
    once, the severity of each failure asked after showing it (all before anything is written)."""
    asks = {ask.name: ask for ask in _asks(root)}
    run = fill([asks["run"]], {"run": options.get("run")}, interactive=interactive)["run"]
    given = {name: value for name, value in options.items() if value not in (None, "", [])}
    incidents = []
    for number, draft in enumerate(drafts, 1):
        values = {**incident_values(draft), **given, "run": run}
        if "severity" not in given:
            if interactive or (interactive is None and sys.stdin.isatty()):
                print("\n".join(summary(number, draft)))
            values.update(fill([asks["severity"]], {}, interactive=interactive))
        incidents.append(values)
    return incidents


def run(args: argparse.Namespace, *, root: Path, now: datetime, argv: list[str]) -> int:
    options = {name: getattr(args, name) for name in FLAGS}
    if args.from_log is not None:
        return from_log_command(root=root, now=now, log=args.from_log, **options)
    return new_incident_command(root=root, now=now, **options)
