"""`tooling serve`: the site on a local port, re-rendered when a record changes."""
from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path

from tooling.site.serve import serve


def serve_command(*, root: Path, dev_addr: str, now: datetime | None) -> int:
    return serve(root, dev_addr=dev_addr, now=now)


def run(args: argparse.Namespace, *, root: Path, now: datetime, argv: list[str]) -> int:
    # a server runs for days: without --now its pages follow the clock, re-read at each render
    return serve_command(root=root, dev_addr=args.dev_addr, now=args.now)
