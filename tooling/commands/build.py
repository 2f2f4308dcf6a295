"""`tooling build`: the whole site from the records, checked strictly."""
from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path

from tooling.now import Clock
from tooling.records.findings import shown_path

NAME = "build"
HELP = "validate, render the generated pages and build the site (strict)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--site-dir", type=Path, help="where to write the site (default: site/)")
    parser.add_argument("--render-only", action="store_true", help="only write docs/generated/, skip mkdocs")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    return build_command(root=root, now=clock(), site_dir=args.site_dir, render_only=args.render_only)


def build_command(*, root: Path, now: datetime, site_dir: Path | None, render_only: bool) -> int:
    from tooling.site.build import mkdocs_build, render_site
    from tooling.site.config import read_site_config
    from tooling.site.output import site_target

    site = read_site_config(root)  # the one reading of mkdocs.yml, for every step
    if not render_only:
        site_target(root, site_dir, site)  # a --site-dir it must refuse is refused before anything is written
    result = render_site(root, now=now, site=site)
    print(f"rendered {len(result.written)} page(s), {result.unchanged} unchanged, "
          f"{len(result.removed)} removed", file=sys.stderr)
    if not render_only:
        target = mkdocs_build(root, site, site_dir=site_dir)
        print(f"site built in {shown_path(target)}", file=sys.stderr)
    return 0
