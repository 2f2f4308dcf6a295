"""Publishing a version of the site with mike: the wiki as it stood at each milestone."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Iterator

from tooling.errors import UserError
from tooling.site.build import render_site


# The version selector asks the server for ../versions.json, which only mike's pages branch has:
# a site built by `tooling build` or served locally would request it and get a 404. So the
# selector is switched on here, for the copies mike publishes, and nowhere else.
PUBLISHED_EXTRA = "extra:\n  version:\n    provider: mike\n"


@contextmanager
def published_config(root: Path) -> Iterator[Path]:
    """A config file beside mkdocs.yml that inherits it and adds the version selector; removed
    afterwards. (Beside it, because mkdocs resolves docs_dir and custom_dir from the file.)"""
    with tempfile.NamedTemporaryFile("w", dir=root, prefix=".tooling-publish-", suffix=".yml",
                                     delete=False, encoding="utf-8") as handle:
        handle.write(f"INHERIT: mkdocs.yml\n{PUBLISHED_EXTRA}")
    try:
        yield Path(handle.name)
    finally:
        os.unlink(handle.name)


def _mike(root: Path, config: Path, *args: str) -> None:
    # mike runs `mkdocs` itself: make this environment's mkdocs the one it finds.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "NO_MKDOCS_2_WARNING": "1"}
    mike = str(Path(sys.executable).parent / "mike")
    result = subprocess.run([mike, *args, "--config-file", str(config)],
                            cwd=root, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise UserError(f"mike {args[0]} failed:\n{result.stderr.strip()}")


def publish(root: Path, *, version: str, alias: str, now: datetime, push: bool,
            branch: str = "gh-pages", set_default: bool = True) -> None:
    """Render the pages, deploy them as ``version`` with ``alias``; optionally make that the default."""
    render_site(root, now=now)
    push_args = ["--push"] if push else []
    with published_config(root) as config:
        _mike(root, config, "deploy", "--update-aliases", "--branch", branch, *push_args, version, alias)
        if set_default:
            _mike(root, config, "set-default", "--branch", branch, *push_args, alias)
