"""Publishing a version of the site with mike: the wiki as it stood at each milestone."""
from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from tooling.errors import UserError
from tooling.site.build import render_site


def _mike(root: Path, *args: str) -> None:
    # mike runs `mkdocs` itself: make this environment's mkdocs the one it finds.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "NO_MKDOCS_2_WARNING": "1"}
    mike = str(Path(sys.executable).parent / "mike")
    result = subprocess.run([mike, *args, "--config-file", str(root / "mkdocs.yml")],
                            cwd=root, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise UserError(f"mike {args[0]} failed:\n{result.stderr.strip()}")


def publish(root: Path, *, version: str, alias: str, now: datetime, push: bool,
            branch: str = "gh-pages", set_default: bool = True) -> None:
    """Render the pages, deploy them as ``version`` with ``alias``; optionally make that the default."""
    render_site(root, now=now)
    push_args = ["--push"] if push else []
    _mike(root, "deploy", "--update-aliases", "--branch", branch, *push_args, version, alias)
    if set_default:
        _mike(root, "set-default", "--branch", branch, *push_args, alias)
