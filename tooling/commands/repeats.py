"""`tooling repeats`: the failures seen more than once, ranked as automation candidates."""
from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooling.messages import counted, render
from tooling.now import Clock

if TYPE_CHECKING:
    from rich.table import Table

    from tooling.analysis import Analysis, Candidate

NAME = "repeats"
HELP = "failures seen more than once, ranked as automation candidates"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--for", dest="incident", metavar="INC-x",
                        help="only the earlier incidents this one most likely repeats, each with why")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    if args.incident is not None:  # an empty --for is a mistake, not the whole ranking
        return for_command(args.incident, root=root, now=clock(), as_json_output=args.json)
    return repeats_command(root=root, now=clock(), as_json_output=args.json)


def for_command(incident_id: str, *, root: Path, now: datetime, as_json_output: bool) -> int:
    """The earlier incidents ``incident_id`` most likely repeats (what filing it suggested), one a line."""
    from tooling.analysis import load_analysis
    from tooling.analysis.repeats import earlier_repeats_of
    from tooling.errors import UserError
    from tooling.rules.kept import kept_checks

    analysis = load_analysis(root, now=now, checked=kept_checks(root))
    views = {v.id: v for v in analysis.incidents}
    if incident_id not in views:
        raise UserError(f"--for: no incident {incident_id!r} in this repository; expected an id such as "
                        f"{next(iter(views), 'INC-0001')!r}")
    found = earlier_repeats_of(views[incident_id], analysis.incidents, analysis.index)
    if as_json_output:
        print(json.dumps({"incident": incident_id, "likely_repeats": [
            {"incident": other, "reason": render(why), "title": views[other].data["title"]} for other, why in found]},
            indent=2, ensure_ascii=False))
        return 0
    if not found:
        print(f"no earlier incident looks like {incident_id}")
    for other, why in found:
        print(f"{other}  {render(why)}: {views[other].data['title']}")
    return 0


def as_json(analysis: Analysis) -> dict[str, Any]:
    return {
        "candidates": [_candidate(rank, c) for rank, c in enumerate(analysis.candidates, 1)],
        "likely_repeats": [{"incident": s.incident, "similar": s.similar, "score": s.score}
                           for s in analysis.suggestions],
    }


def _candidate(rank: int, c: Candidate) -> dict[str, Any]:
    return {"rank": rank, "level": c.level, "incidents": [v.id for v in c.incidents],
            "failures": [[v.id for v in failure] for failure in c.failures], "occurrences": c.occurrences,
            "failure_mode": c.failure_mode, "reason": render(c.reason),
            "layer": c.layer, "symptom": c.symptom, "signature": c.signature,
            "gpu_hours_lost": c.gpu_hours, "steps_lost": c.steps_lost,
            "hours_to_resolve": c.hours_to_resolve, "state": c.state, "planned_by": c.planned_by,
            "automation": {"id": c.automation.id, "title": c.automation.title,
                           "what": c.automation.automation, "playbook": c.automation.playbook,
                           "state": c.availability, "implementation": _shipped(c),
                           "guidance_only": c.automation.guidance_only,
                           "handled": {"occurrences": c.handled_count,
                                       "since": c.handled_since.isoformat() if c.handled_since else None}}}


def _shipped(c: Candidate) -> dict[str, str] | None:
    shipped = c.automation.implementation
    return None if shipped is None else {"kind": shipped.kind, "ref": shipped.ref, "enable": shipped.enable}


def availability(c: Candidate) -> str:
    """The automation's state in one line: in place and what it handled, how to turn it on, or
    why nothing ships."""
    if c.availability == "in place":
        return (f"in place: handled {counted(c.handled_count, 'occurrence')} without a person "
                f"since {c.handled_since}")
    if c.automation.implementation is not None:
        return f"available ({c.automation.implementation.ref}): {c.automation.implementation.enable}"
    return f"not available: {c.automation.guidance_only}"


def _table(analysis: Analysis) -> Table:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="Automation candidates: the same failure again, or failures the same automation would have handled",
                  show_lines=True)
    for heading in ("#", "Incidents", "Failure", "GPU-h", "Steps", "Hours to resolve", "Automate", "State"):
        table.add_column(heading, overflow="fold", justify="right" if heading in ("#", "GPU-h", "Steps") else "left")
    for rank, c in enumerate(analysis.candidates, 1):
        state = f"[bold red]{c.state}[/]" if c.state == "automation not working" else c.state
        # record text (signatures in the reason) is shown as written, never read as rich markup
        table.add_row(str(rank), escape(", ".join(v.id for v in c.incidents)),
                      escape(f"{c.level}: {c.failure_mode or c.layer + ' / ' + c.symptom}\n{render(c.reason)}"),
                      f"{c.gpu_hours:,.0f}", f"{c.steps_lost:,}",
                      f"{c.hours_to_resolve:,.1f}", escape(f"{c.automation.title}\n{availability(c)}"), state)
    return table


def repeats_command(*, root: Path, now: datetime, as_json_output: bool) -> int:
    from tooling.analysis import load_analysis
    from tooling.records.load import no_collection
    from tooling.rules.kept import kept_checks

    # the output made with the collector off too, as the analysis was; and the analysis freed
    # before it is on again: the collector's first passes after would walk every object the
    # analysis made, twice (a sixth of the command over 100,000 incidents), where freeing it walks them once
    with no_collection():
        analysis = load_analysis(root, now=now, checked=kept_checks(root))  # files unchanged since: not read again
        if as_json_output:
            print(json.dumps(as_json(analysis), indent=2))
        else:
            _print_tables(analysis)
        del analysis
    return 0


def _print_tables(analysis: Analysis) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    if analysis.candidates:
        console.print(_table(analysis))
    else:
        console.print("No failure has happened twice yet.")
    if analysis.suggestions:
        likely = Table(title="Likely repeats by wording: confirm with repeat_of, or rule out with not_repeat_of")
        for heading in ("Incident", "Looks like", "Score", "Confirm with"):
            likely.add_column(heading)
        for s in analysis.suggestions:
            likely.add_row(escape(s.incident), escape(s.similar), f"{s.score:.2f}",
                           escape(f"tooling set {s.incident} repeat_of={s.similar}"))
        console.print(likely)
