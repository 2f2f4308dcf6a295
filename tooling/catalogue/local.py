"""A team's own failure modes: ``runbooks/catalogue.yaml`` in its repository, in the shipped
catalogue's format. An entry with a shipped id replaces that mode where it stands; the others are
added before the shipped ones (earlier entries win ties: a team's own recogniser is the more
particular). Everything that reads the catalogue reads the merge (:func:`tooling.catalogue.modes.catalogue`)
while :func:`repository` names the repository, as the dispatcher does for every command.

The file lives in ``runbooks/`` so that the pre-commit hook, which hands validate the changed
files of ``incidents/`` and ``runbooks/``, checks it too; validate reads it as a catalogue, not a
record (:mod:`tooling.catalogue.checks`). This module only names it: every command starts here,
and only one that reads the catalogue pays for checking it.
"""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

LOCAL = Path("runbooks") / "catalogue.yaml"

_repository: Path | None = None  # the repository whose local catalogue is read; None: shipped only
_UNSET = ("",)
_last: tuple[str, int, int] | tuple[str] | None = _UNSET  # the local catalogue read last
# Every reader of the catalogue asks whether the local file changed (81,000 times in `tooling repeats` of
# 30,000 incidents: a fifth of its analysis went on stat). Within a command the file is stat'ed when the
# repository is named and at most once a STAT_INTERVAL after: a long-running watch sees an edit of it
# that much later.
STAT_INTERVAL = 1.0
_stated_at = -STAT_INTERVAL  # time.monotonic() of the last stat


@contextmanager
def repository(root: Path | None) -> Iterator[None]:
    """Within it, the catalogue is the shipped one merged with ``root``'s local catalogue."""
    global _repository
    before, _repository = _repository, root
    refresh()
    try:
        yield
    finally:
        _repository = before
        refresh()


def is_local(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a local catalogue (validate checks it as one, not as a record)."""
    return Path(path).parts[-2:] == LOCAL.parts


def key() -> tuple[str, int, int] | None:
    """What the merged catalogue depends on: the local file's path and stat, or None."""
    if _repository is None:
        return None
    path = _repository / LOCAL
    try:
        stat = path.stat()
    except OSError:
        return None
    return str(path), stat.st_mtime_ns, stat.st_size


def refresh(*, recent: bool = False) -> tuple[str, int, int] | None:
    """:func:`key`, after forgetting what was worked out from another local catalogue than the
    one read last (another repository's, or an edit of it): the lru_caches of the package's
    modules (compiled recognisers, matchers, indexes), walked, not imported (they stand on the
    floors above). Called as a repository is named, before any cached answer is used.
    ``recent``: a key found within the last STAT_INTERVAL will do (the readers' case)."""
    global _last, _stated_at
    now = time.monotonic()
    if recent and _last is not _UNSET and now - _stated_at < STAT_INTERVAL:
        return _last  # type: ignore[return-value]  # not _UNSET: checked above
    _stated_at = now
    current = key()
    if current != _last:
        if _last is not _UNSET:
            _forget_derived()
        _last = current
    return current


def _forget_derived() -> None:
    for name, module in list(sys.modules.items()):
        if name.startswith("tooling.") and module is not None:
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)) and getattr(value, "__module__", None) == name:
                    value.cache_clear()
