"""The `tooling` command line: parse arguments and dispatch, nothing else."""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import NoReturn, Sequence

from tooling.slurm.signals import catch_early

# first of all, before the imports that take most of starting up: a `tooling job` wrapping a
# trainer catches the scheduler's signals from its first moments (a USR1 must not kill it)
catch_early(sys.argv)

from tooling.distribution import version  # noqa: E402
from tooling.error_handler import run_handled  # noqa: E402
from tooling.errors import UsageError  # noqa: E402


class _Parser(argparse.ArgumentParser):
    """argparse, answering a bad command line in one line (no usage block; `--help` has it) and
    a wrong choice in the house's words; a command's parser too begins ``tooling: error:`` (not
    argparse's ``tooling report: error:``), the command named where the error is."""

    def error(self, message: str) -> NoReturn:
        choice = _INVALID_CHOICE.search(message)
        if choice:
            message = (f"{message[:choice.start()]}Expected one of: [{choice['choices']}] "
                       f"but received: {choice['value']}")
        command = self.prog.removeprefix(PROG).strip()  # a command's parser is named 'tooling report'
        self.exit(2, f"{PROG}: error: {command + ': ' if command else ''}{message}\n")


PROG = "tooling"


_INVALID_CHOICE = re.compile(r"invalid choice: (?P<value>.*) \(choose from (?P<choices>.*)\)\Z")


def _parser() -> argparse.ArgumentParser:
    # the commands and their arguments need the `wiki` extra: imported here, inside run_handled, so
    # that an install without it ends in one line naming the extra (tooling.distribution)
    from tooling import arguments
    from tooling.commands import add_commands

    parser = _Parser(prog=PROG, description=(
        "Resilience playbook: records of incidents, postmortems and training runs, "
        "validated and rendered into a site."))
    parser.add_argument("--root", type=Path, help="repository root (default: found upward from here)")
    parser.add_argument("--now", type=arguments.timestamp, metavar="TIME",
                        help="the time every command takes as now, e.g. 2026-11-29T12:00:00+00:00 "
                             "(default: the clock; for reproducible builds and tests)")
    parser.add_argument("--version", action="version", version=f"{PROG} {version()}")
    # --now is also accepted after the command; SUPPRESS keeps the top-level value when it is not
    common = _Parser(add_help=False)
    common.add_argument("--now", type=arguments.timestamp, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    add_commands(parser.add_subparsers(dest="command", metavar="COMMAND", required=True), common)
    return parser


def _check_text(argv: Sequence[str]) -> None:
    """Arguments hold text a record may hold: invalid UTF-8 or a control character is refused
    here, before it can reach a file (where YAML would mangle it or refuse it)."""
    from tooling.records.characters import first_bad

    for number, arg in enumerate(argv, 1):
        bad = first_bad(arg)
        if bad is not None:
            index, message = bad
            if "surrogate" in message:
                message = "bytes that are not valid UTF-8; expected UTF-8 text"
            raise UsageError(f"argument {number} ({arg[:index]!r}...): {message}")


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    return run_handled(lambda: _parse_and_dispatch(arguments))


def _parse_and_dispatch(arguments: list[str]) -> int:
    if arguments == ["--version"]:  # answered in any install, the base one too (the parser needs the wiki extra)
        print(f"{PROG} {version()}")
        return 0
    from tooling.commands import dispatch, module_of

    _check_text(arguments)
    parser = _parser()
    args, extra = parser.parse_known_args(arguments)
    trailing = getattr(module_of(args.command), "TRAILING", None)
    if extra[:1] == ["--"] and trailing and not getattr(args, trailing):
        # `tooling job RUN --log F -- TRAINER...`: argparse gives a positional list only the words
        # before the first option, so the command after an option comes back unparsed
        setattr(args, trailing, extra)
        extra = []
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return dispatch(parser, args, arguments)


if __name__ == "__main__":
    sys.exit(main())
