"""One module per subcommand; :func:`dispatch` calls the one the command line named.

Each command converts its arguments into keyword-only calls of importable functions and
turns their errors into its own words; the logic lives outside this package.
"""
from __future__ import annotations

import argparse
from datetime import datetime
from importlib import import_module

from tooling.records.layout import find_root

# command -> module in this package; each module has `run(args, *, root, now, argv)`
MODULES = {
    "validate": "validate", "new-incident": "new_incident", "new-postmortem": "new_postmortem",
    "new-run": "new_run", "set": "set_fields", "build": "build", "serve": "serve", "publish": "publish",
    "repeats": "repeats", "review": "review", "budget": "budget", "stacks": "stacks", "triage": "triage",
    "scan": "scan", "watch": "watch", "import": "import_history", "export": "export", "report": "report", "job": "job",
    "watchdog": "watchdog",
}


def clock(args: argparse.Namespace) -> datetime:
    """The one 'now' of this invocation: --now, else the local clock with its offset."""
    return args.now or datetime.now().astimezone().replace(microsecond=0)


def dispatch(args: argparse.Namespace, argv: list[str]) -> int:
    root = args.root.resolve() if args.root else find_root()
    module = import_module(f"tooling.commands.{MODULES[args.command]}")
    return module.run(args, root=root, now=clock(args), argv=argv)
