"""What the tests of recognisers and of `tooling scan` ask of a line or a log: the mode one line is
recognised as, and the drafts a log's text makes (as `tooling scan --json` prints them)."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from tooling.catalogue.recognise import recognise
from tooling.logs.scan import scan_logs
from tooling.writers.filing import as_json

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)


def mode(line: str) -> str | None:
    """The id of the failure mode ``line`` is recognised as, if any."""
    found = recognise(line).mode
    return found.id if found else None


def drafts(tmp_path: Path, text: str) -> list[dict]:  # type: ignore[type-arg]
    """The drafts ``tooling scan`` makes of a log holding ``text``, as JSON objects."""
    log = tmp_path / "train.log"
    log.write_text(text, encoding="utf-8")
    return [as_json(d) for d in scan_logs([log], now=NOW).drafts]
