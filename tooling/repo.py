"""Where the records live: the repository root and its folders."""
from __future__ import annotations

from pathlib import Path

from tooling.records.kinds import RECORD_DIRS

_MARKERS = ("mkdocs.yml", *RECORD_DIRS)


def find_root(start: Path | None = None) -> Path:
    """The nearest folder at or above ``start`` that holds mkdocs.yml or a records folder."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if any((folder / marker).exists() for marker in _MARKERS):
            return folder
    return here
