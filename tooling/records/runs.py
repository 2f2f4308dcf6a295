"""What a run record says about itself, used by the rules and the analyses alike."""
from __future__ import annotations

from typing import Any

ENDED_OR_NOT_STARTED = ("planned", "finished", "failed")  # every other state is a live run
MIN_ROTATION = 2  # a 24/7 run needs at least two people on call (four is better)


def is_live(run: dict[str, Any]) -> bool:
    """A run that is (or should be) training now: its page must stay fresh and staffed."""
    return run.get("state") not in ENDED_OR_NOT_STARTED


def rotation(run: dict[str, Any]) -> set[str]:
    """Everyone on the run's on-call rotation: the members and whoever holds a shift."""
    oncall = run.get("oncall", {})
    return set(oncall.get("members", [])) | {s["person"] for s in oncall.get("shifts", [])}
