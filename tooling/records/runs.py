"""What a run record says about itself, used by the rules, the analyses and the live side alike:
whether the run is live or ended, who is on call, and when its silence is a stall.

The stall rule has its one home here (:func:`stall_minutes`, :func:`stalled`): the run page
(:mod:`tooling.analysis.feed`) and ``tooling watch`` (:mod:`tooling.watch.watcher`) both ask it;
``docs/assets/javascripts/freshness.js`` makes the same comparison in the reader's browser.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any

NOT_STARTED = ("planned",)
ENDED = ("finished", "failed")  # no progress is expected of a run in these states
MIN_ROTATION = 2  # a 24/7 run needs at least two people on call (four is better)
STALL_AFTER_MINUTES = 30  # feed.stall_after_minutes when the record has none (the run schema says so too)
# seconds per feed.samples item written (the newest of each interval kept): 96 samples in 48 hours,
# enough for a steps-per-hour chart of the last day, and a page short enough to rewrite each write
SAMPLE_EVERY = 1800.0


def is_live(run: dict[str, Any]) -> bool:
    """A run that is (or should be) training now: its page must stay fresh and staffed."""
    return run.get("state") not in (*NOT_STARTED, *ENDED)


def has_ended(run: dict[str, Any]) -> bool:
    """The record says the run ended: an ended state, or a scheduler's ``end`` as its latest event
    (read from a record that may not validate: a field of the wrong type says nothing)."""
    feed = run.get("feed") if isinstance(run.get("feed"), dict) else {}
    events = feed.get("events") if isinstance(feed.get("events"), list) else []
    return run.get("state") in ENDED or bool(events and isinstance(events[-1], dict) and events[-1].get("kind") == "end")


def rotation(run: dict[str, Any]) -> set[str]:
    """Everyone on the run's on-call rotation: the members and whoever holds a shift."""
    oncall = run.get("oncall", {})
    return set(oncall.get("members", [])) | {s["person"] for s in oncall.get("shifts", [])}


def stall_minutes(run: dict[str, Any]) -> tuple[int, bool]:
    """Minutes without progress that make a stall: the record's ``feed.stall_after_minutes``, else
    :data:`STALL_AFTER_MINUTES`; and whether the record set them."""
    feed = run.get("feed") if isinstance(run.get("feed"), dict) else {}
    minutes = feed.get("stall_after_minutes")
    if isinstance(minutes, int) and not isinstance(minutes, bool):
        return minutes, True
    return STALL_AFTER_MINUTES, False


def stalled(silence: timedelta, minutes: float) -> bool:
    """The stall rule: no progress for ``minutes`` (or more) is a stall."""
    return silence >= timedelta(minutes=minutes)
