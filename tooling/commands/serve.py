"""`tooling serve`: the site on a local port, re-rendered when a record changes."""
from __future__ import annotations

import argparse
from pathlib import Path

from tooling import arguments
from tooling.now import Clock

NAME = "serve"
HELP = "build, serve with live reload, re-render when a record changes"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dev-addr", default="127.0.0.1:8000", type=arguments.address, help="host:port (default: %(default)s)")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    return serve_command(root=root, dev_addr=args.dev_addr, clock=clock)


def serve_command(*, root: Path, dev_addr: str, clock: Clock) -> int:
    from tooling.site.serve import serve

    # a server runs for days: without --now its pages follow the clock, asked again at each render
    return serve(root, dev_addr=dev_addr, clock=clock)
