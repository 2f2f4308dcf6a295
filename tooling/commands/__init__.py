"""One module per subcommand, the whole command in it: its name and help (``NAME``, ``HELP``),
its arguments (``add_arguments(parser)``) and ``run(args, *, root, clock, argv)``, which turns them
into keyword-only calls of importable functions (the logic lives outside this package). ``clock``
gives the invocation's now (:class:`tooling.now.Clock`: --now, else the local clock): a one-shot
command asks it once, a command that runs for hours asks again when it needs the time.

Every command's parser is built at each start (``tooling --help`` lists them all), so a command
module imports at its top only what its parser needs; the modules of the work are imported where
the work is, for the one command that runs (a start stays about 0.1 s, not 0.7 s).
:func:`dispatch` runs the command the command line named, and words the bad values of a record
being made (a :class:`~tooling.errors.FieldError`, by field) with the options they came from: an
option's ``dest`` is the field it fills, so the command's parser is the map.
"""
from __future__ import annotations

import argparse
from importlib import import_module
from types import ModuleType

from tooling.errors import FieldError, UsageError
from tooling.now import Clock
from tooling.records.layout import find_root

# the modules of this package that are commands, in the order `tooling --help` lists them; a new
# command is a module and its line here
COMMANDS = (
    "init", "validate", "new_incident", "new_postmortem", "new_run", "set_fields", "report", "job",
    "scan", "watch", "import_history", "export",
    "build", "serve", "publish",
    "repeats", "review", "budget",
    "stacks", "triage", "watchdog", "health_check", "preflight", "data_check", "doctor",
)


def modules() -> list[ModuleType]:
    return [import_module(f"{__name__}.{name}") for name in COMMANDS]


def add_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Each command's parser, from its module (``common``: the options every command takes)."""
    for module in modules():
        module.add_arguments(sub.add_parser(module.NAME, parents=[common], help=module.HELP))


def module_of(command: str) -> ModuleType:
    return next(module for module in modules() if module.NAME == command)


def option_names(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each field a command's arguments fill (an argument's ``dest``) -> how a message names it:
    its long option (``detected_at`` -> ``--detected-at``), or an argument's metavar (``NAME``)."""
    names: dict[str, str] = {}
    for action in parser._actions:
        if action.option_strings:
            name = next((o for o in action.option_strings if o.startswith("--")), action.option_strings[0])
        else:
            name = action.metavar if isinstance(action.metavar, str) else action.dest
        names.setdefault(action.dest, name)
    return names


def command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return commands.choices[command]


def dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]) -> int:
    from tooling.catalogue.local import repository  # the work's: not loaded to build the parser

    root = args.root.resolve() if args.root else find_root()
    if args.root and not root.is_dir():  # a mistyped --root would read as an empty repository
        said = "no such folder" if not root.exists() else "not a folder"
        raise UsageError(f"--root: expected the repository's folder but received: '{args.root}' ({said})")
    try:
        with repository(root):  # the catalogue every command reads is the shipped one and root's own
            return module_of(args.command).run(args, root=root, clock=Clock(args.now), argv=argv)
    except FieldError as exc:
        raise exc.naming(option_names(command_parser(parser, args.command))) from None
