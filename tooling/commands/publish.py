"""`tooling publish VERSION`: a versioned copy of the site on the gh-pages branch (mike)."""
from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path

from tooling import arguments
from tooling.now import Clock

NAME = "publish"
HELP = "deploy a version of the site with mike (gh-pages branch)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("version", type=arguments.version, help="version name, e.g. 0.3 or 2026-11-29")
    parser.add_argument("--alias", default="latest", type=arguments.version, help="alias to point at it (default: %(default)s)")
    parser.add_argument("--branch", default="gh-pages", help="branch holding the versions (default: %(default)s)")
    parser.add_argument("--push", action="store_true", help="push the branch to its remote")
    parser.add_argument("--no-set-default", dest="set_default", action="store_false",
                        help="leave the site's default version as it is")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    return publish_command(args.version, root=root, alias=args.alias, now=clock(), push=args.push,
                           branch=args.branch, set_default=args.set_default)


def publish_command(version: str, *, root: Path, alias: str, now: datetime, push: bool, branch: str,
                    set_default: bool) -> int:
    from tooling.site.publish import publish

    publish(root, version=version, alias=alias, now=now, push=push, branch=branch, set_default=set_default)
    where = f"{branch} (pushed)" if push else f"local branch {branch}"
    print(f"published {version} as {alias} on {where}", file=sys.stderr)
    return 0
