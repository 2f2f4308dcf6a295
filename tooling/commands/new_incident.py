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
from typing import TYPE_CHECKING, Any

from tooling import arguments
from tooling.commands.prompting import Ask, fill
from tooling.errors import UserError
from tooling.messages import counted
from tooling.now import Clock
from tooling.records.layout import ids
from tooling.records.schema import field_spec

if TYPE_CHECKING:
    from tooling.analysis.likely import LikelyRepeats
    from tooling.logs.drafts import Draft

NAME = "new-incident"
HELP = "scaffold incidents/INC-NNNN.yaml"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--title")
    parser.add_argument("--run", help="id of the training run (runbooks/runs/<id>.yaml)")
    parser.add_argument("--severity", help="sev1 | sev2 | sev3 | sev4")
    parser.add_argument("--symptom", help="nan | hang | divergence | crash | slowdown | data | infra | checkpoint | other")
    parser.add_argument("--layer", help="layer of the stack where the cause sat (default: unknown)")
    parser.add_argument("--signature", action="append", dest="signatures", metavar="TEXT",
                        help="verbatim error signature from the logs (repeatable)")
    parser.add_argument("--node", action="append", dest="nodes", metavar="HOST", help="affected node (repeatable)")
    parser.add_argument("--rank", action="append", dest="ranks", type=arguments.natural, metavar="N",
                        help="affected rank (repeatable)")
    parser.add_argument("--detected-at", help="when it was noticed (default: now), e.g. 2026-03-14T02:47:00+00:00")
    parser.add_argument("--reported-by", help="who files it (default: $USER)")
    parser.add_argument("--from-log", type=Path, metavar="FILE",
                        help="fill signatures, failure mode, nodes, ranks and times from a log (dmesg, NCCL, "
                             "SLURM output, tracebacks); one incident per distinct failure found")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    from tooling.writers.scaffold import INCIDENT_FIELDS

    options = {name: getattr(args, name) for name in INCIDENT_FIELDS}  # each option's dest is its field
    if args.from_log is not None:
        return from_log_command(root=root, now=clock(), log=args.from_log, **options)
    return new_incident_command(root=root, now=clock(), **options)


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
    from tooling.analysis.likely import NOT_SHOWN

    lines = likely.lines(incident_id)
    if lines is None:
        print(NOT_SHOWN, file=sys.stderr)
    else:
        print("\n".join(lines))


def new_incident_command(*, root: Path, now: datetime, interactive: bool | None = None, **options: Any) -> int:
    from tooling.analysis.likely import LikelyRepeats
    from tooling.writers.scaffold import new_incident

    values = fill(_asks(root), options, interactive=interactive)
    path = new_incident(root=root, now=now, **values)
    print(f"created {path.relative_to(root)}")
    _show_likely_repeats(LikelyRepeats(root, now), path.stem)
    return 0


def from_log_command(*, root: Path, now: datetime, log: Path, interactive: bool | None = None,
                     **options: Any) -> int:
    from tooling.analysis.likely import LikelyRepeats
    from tooling.logs.chunks import log_name
    from tooling.logs.scan import scan_logs
    from tooling.writers.filing import file_all
    from tooling.writers.scaffold import require_run

    if options.get("run"):  # a wrong run is said before the log is read, not after
        require_run(root, options["run"])
    result = scan_logs([log], now=now)
    if not result.drafts:
        lines = result.logs[0].lines
        raise UserError(f"{log_name(log)}: no failure recognised in its {counted(lines, 'line')}; "
                        "nothing filed (file it without --from-log)")
    created = file_all(_incidents(root, result.drafts, options, interactive), root=root, now=now)
    likely = LikelyRepeats(root, now)  # one analysis for every incident filed
    for path in created:
        print(f"created {path.relative_to(root)}")
        _show_likely_repeats(likely, path.stem)
    return 0


def _incidents(root: Path, drafts: list[Draft], options: dict[str, Any], interactive: bool | None) -> list[dict[str, Any]]:
    """The values of each incident: the log's, overridden by the flags given; the run asked
    once, the severity of each failure asked after showing it (all before anything is written)."""
    from tooling.writers.filing import incident_values, summary

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
