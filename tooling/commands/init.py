"""`tooling init DIR`: a team's wiki repository (mkdocs.yml naming the playbook plugin, the record
folders, a README, pre-commit and CI), never overwriting a file."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tooling.now import Clock

NAME = "init"
HELP = "write a team's wiki repository: mkdocs.yml, incidents/, runbooks/runs/, README, pre-commit, CI"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", type=Path, metavar="DIR", help="the folder to write (made when missing)")
    parser.add_argument("--name", help="the site's name (default: the folder's name)")
    parser.add_argument("--lang", default="en", metavar="LANGS",
                        help="the site's editions: en, or en,ko for English and Korean (default: %(default)s)")
    parser.add_argument("--demo", action="store_true",
                        help="add the example run, incidents and postmortems the package bundles")
    parser.add_argument("--force", action="store_true",
                        help="write into a folder that is not empty (adds only the files it lacks; none is overwritten)")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    from tooling.writers.team_repo import init_repository, languages

    done = init_repository(args.directory, name=args.name, langs=languages(args.lang), demo=args.demo,
                           force=args.force)
    for path in done.written:
        print(f"created {args.directory / path}")
    for path in done.skipped:
        print(f"skipped {args.directory / path}: there already, left as it is", file=sys.stderr)
    print(f"next: cd {args.directory} and read README.md (install, pre-commit install, tooling build)", file=sys.stderr)
    return 0
