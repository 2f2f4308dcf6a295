"""`tooling budget [RUN]`: what a run really costs, from the inputs on its wiki page."""
from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path

from tooling.errors import UsageError
from tooling.now import Clock
from tooling.records.findings import excerpt

NAME = "budget"
HELP = "a run's budget: GPU time with the failure buffer, storage, egress, people"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", nargs="?", metavar="RUN", help="run id (default: every run with a budget)")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    return budget_command(args.run, root=root, now=clock())


def budget_command(run_id: str | None, *, root: Path, now: datetime) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from tooling.analysis import load_analysis

    cards = [c for c in load_analysis(root, now=now).runs if c.budget is not None]
    if run_id is not None:
        known = [c.id for c in cards]
        cards = [c for c in cards if c.id == run_id]
        if not cards and not known:  # "one of: []" would name nothing the user can pick
            raise UsageError(f"RUN: no run page has a budget section yet but received: {excerpt(run_id)}; expected a "
                             "run record (runbooks/runs/) with a budget: section")
        if not cards:
            raise UsageError(f"RUN: Expected one of: {known} (the runs with a budget section) "
                             f"but received: {excerpt(run_id)}")
    console = Console()
    for card in cards:
        b = card.budget
        assert b is not None
        # record text is shown as written: rich would read "[/]" in a title as its own markup
        table = Table(title=escape(f"Budget of {card.data['title']} ({card.id})"))
        table.add_column("Item")
        table.add_column(escape(f"Cost ({b.currency})"), justify="right")
        table.add_row("GPU-hours x price, as planned", f"{b.gpu_cost:,.0f}")
        table.add_row(f"with the failure buffer ({b.buffer_factor}x)", f"{b.gpu_with_buffer:,.0f}")
        table.add_row(f"checkpoint storage ({b.storage_share:.1%} of GPU cost)", f"{b.storage:,.0f}")
        table.add_row("egress (cross-region checkpoint copies)", f"{b.egress:,.0f}")
        table.add_row("[bold]total[/]", f"[bold]{b.total:,.0f}[/]")
        table.add_row("people on the rotation", str(b.people))
        console.print(table)
        for flag in b.flags:
            console.print(f"[yellow]warning:[/] {escape(str(flag))}")
    if not cards:
        console.print("No run page has a budget section.")
    return 0
