"""`tooling build`: the whole site from the records, checked strictly."""
from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path

from tooling.site.build import mkdocs_build, render_site


def run(args: argparse.Namespace, *, root: Path, now: datetime, argv: list[str]) -> int:
    return build_command(root=root, now=now, site_dir=args.site_dir, render_only=args.render_only)


def build_command(*, root: Path, now: datetime, site_dir: Path | None, render_only: bool) -> int:
    result = render_site(root, now=now)
    print(f"rendered {len(result.written)} page(s), {result.unchanged} unchanged, "
          f"{len(result.removed)} removed", file=sys.stderr)
    if not render_only:
        mkdocs_build(root, site_dir=site_dir)
        print(f"site built in {site_dir or root / 'site'}", file=sys.stderr)
    return 0
