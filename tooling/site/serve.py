"""`tooling serve`: mkdocs' live-reloading server, fed by re-rendering whenever a record changes."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from tooling.errors import UserError
from tooling.records.kinds import RECORD_DIRS
from tooling.records.layout import repository_files
from tooling.site.build import render_site

POLL_SECONDS = 0.25


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """(mtime, size) of every record file: cheap enough to poll several times a second."""
    state = {}
    for path in repository_files(root):
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            continue
        state[path] = (stat.st_mtime_ns, stat.st_size)
    return state


def rerender(root: Path, now: datetime | None, log: Callable[[str], None]) -> None:
    """Render again; bad records are reported and the last good pages stay in place."""
    try:
        result = render_site(root, now=now or datetime.now(timezone.utc))
    except UserError as exc:
        log(f"tooling serve: {exc}")
        return
    if result.written or result.removed:
        log(f"tooling serve: re-rendered {len(result.written)} page(s), removed {len(result.removed)}")


def serve(root: Path, *, dev_addr: str, now: datetime | None = None,
          log: Callable[[str], None] = lambda m: print(m, file=sys.stderr, flush=True)) -> int:
    render_site(root, now=now or datetime.now(timezone.utc))
    server = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "--dev-addr", dev_addr,
                               "--config-file", str(root / "mkdocs.yml")], cwd=root)
    log(f"tooling serve: watching {', '.join(d + '/' for d in RECORD_DIRS)} for changes")
    seen = snapshot(root)
    try:
        while server.poll() is None:
            time.sleep(POLL_SECONDS)
            current = snapshot(root)
            if current != seen:
                seen = current
                rerender(root, now, log)
    except KeyboardInterrupt:
        pass
    finally:
        if server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
    return server.returncode or 0
