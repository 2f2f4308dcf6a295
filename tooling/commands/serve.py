"""`tooling serve`: the site on a local port, re-rendered when a record changes."""
from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path

from tooling import arguments

NAME = "serve"
HELP = "build, serve with live reload, re-render when a record changes"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dev-addr", default="127.0.0.1:8000", type=arguments.address, help="host:port (default: %(default)s)")


def run(args: argparse.Namespace, *, root: Path, now: datetime, argv: list[str]) -> int:
    # a server runs for days: without --now its pages follow the clock, re-read at each render
    return serve_command(root=root, dev_addr=args.dev_addr, now=args.now)


def serve_command(*, root: Path, dev_addr: str, now: datetime | None) -> int:
    from tooling.site.serve import serve

    return serve(root, dev_addr=dev_addr, now=now)
