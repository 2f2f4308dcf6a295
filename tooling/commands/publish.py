"""`tooling publish VERSION`: a versioned copy of the site on the gh-pages branch (mike)."""
from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path

from tooling.site.publish import publish


def publish_command(version: str, *, root: Path, alias: str, now: datetime, push: bool, branch: str,
                    set_default: bool) -> int:
    publish(root, version=version, alias=alias, now=now, push=push, branch=branch, set_default=set_default)
    where = f"{branch} (pushed)" if push else f"local branch {branch}"
    print(f"published {version} as {alias} on {where}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace, *, root: Path, now: datetime, argv: list[str]) -> int:
    return publish_command(args.version, root=root, alias=args.alias, now=now, push=args.push,
                           branch=args.branch, set_default=args.set_default)
