"""`tooling serve`: the site on a local port, re-rendered when a record changes."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

from tooling.site.serve import serve


def serve_command(*, root: Path, dev_addr: str, now: datetime | None) -> int:
    return serve(root, dev_addr=dev_addr, now=now)
