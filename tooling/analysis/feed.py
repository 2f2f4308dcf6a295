"""A run's machine feed: heartbeat age, whether progress stopped, steps per hour, scheduler events.

Pure functions of the run record's ``feed`` (written by the training loop, the SLURM hooks and
``tooling watch``) and a fixed 'now'. The build lays out what they compute for its own 'now';
``docs/assets/javascripts/freshness.js`` recomputes the age and the stall with the reader's
clock from the same heartbeat and threshold, so a published page turns red without a rebuild.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable

from tooling.analysis.incidents import IncidentView
from tooling.records.clock import ahead
from tooling.records.model import parse_time
from tooling.records.runs import stall_minutes, stalled

WINDOW = 24  # hours in the steps-per-hour chart: the last day
RECENT_EVENTS = 10  # scheduler events the run page lists, newest first
HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class HourSteps:
    start: datetime  # UTC, on the hour
    steps: int  # optimizer steps made in [start, start + 1 h)


@dataclass(frozen=True)
class FeedEvent:
    at: datetime
    data: dict[str, Any]  # the event as recorded: kind, job_id, exit_code, state, ...
    incident: IncidentView | None  # the incident it names, when that incident exists


@dataclass(frozen=True)
class Feed:
    heartbeat_at: datetime | None
    age: timedelta | None  # since the heartbeat, never negative; None without one, or with one from the future
    ahead: timedelta | None  # how far a heartbeat from the future is ahead of now: the node's clock runs fast
    stall_after: timedelta
    watched: bool  # a live run with a heartbeat of a time that has come: the page turns red once it is too old
    stalled: bool  # watched, and the heartbeat is stall_after old or older; or live, and it is from the future
    hours: list[HourSteps]  # oldest first, WINDOW whole hours; empty without samples
    events: list[FeedEvent]  # newest first, at most RECENT_EVENTS
    hang_ladder: str | None  # id of the ladder to walk for a hang, if the repository has one

    @property
    def steps_last_day(self) -> int:
        return sum(h.steps for h in self.hours)

    @property
    def until(self) -> datetime | None:
        """The end of the chart's day."""
        return self.hours[-1].start + HOUR if self.hours else None


def heartbeat_age(heartbeat_at: datetime, now: datetime) -> timedelta:
    """How long ago the heartbeat was; one a little ahead of ``now``, within the clocks' slack
    (:data:`tooling.records.clock.CLOCK_SLACK`), counts as just now. Further ahead it has no age:
    see :func:`feed_of`."""
    return max(now - heartbeat_at, timedelta(0))


def is_stalled(age: timedelta | None, stall_after: timedelta, *, live: bool) -> bool:
    """Progress stopped: a live run whose last heartbeat is as old as the threshold or older
    (the stall rule, :func:`tooling.records.runs.stalled`). A run that ended, or never reported
    a heartbeat, cannot stall."""
    return live and age is not None and stalled(age, stall_after / timedelta(minutes=1))


def window_end(samples: list[tuple[datetime, int]], now: datetime, *, live: bool) -> datetime:
    """The end of the chart's day: the last whole hour before ``now`` for a live run (the hour
    under way is not over, and half an hour would read as a slowdown); for a run that ended,
    the hour after its last sample, so its chart shows its last day of training."""
    anchor = now if live or not samples else samples[-1][0] + HOUR
    return anchor.astimezone(timezone.utc).replace(minute=0, second=0, microsecond=0)


def steps_per_hour(samples: Iterable[tuple[datetime, int]], end: datetime, *, hours: int = WINDOW) -> list[HourSteps]:
    """Steps made in each of the ``hours`` whole hours before ``end``, oldest first.

    Each sample is credited with the steps since the sample before it, in the hour it was taken
    (samples come at most a few minutes apart, so that is the hour the steps were made in). A
    step count that went down (a resume from an older checkpoint) credits nothing: the steps
    since that checkpoint are counted from the next sample on.
    """
    start = end - hours * HOUR
    buckets = [0] * hours
    ordered = sorted(samples)
    for (_, before), (at, step) in zip(ordered, ordered[1:]):
        if start <= at < end:
            buckets[int((at - start) / HOUR)] += max(step - before, 0)
    return [HourSteps(start + i * HOUR, steps) for i, steps in enumerate(buckets)]


def recent_events(events: list[dict[str, Any]], incidents: dict[str, IncidentView],
                  *, count: int = RECENT_EVENTS) -> list[FeedEvent]:
    """The last ``count`` events, newest first, each with the incident it names if that exists."""
    timed = [(when, event) for event in events if (when := parse_time(event["at"])) is not None]
    timed.sort(key=lambda pair: pair[0], reverse=True)
    return [FeedEvent(when, event, incidents.get(event.get("incident", ""))) for when, event in timed[:count]]


def _samples(feed: dict[str, Any]) -> list[tuple[datetime, int]]:
    pairs = ((parse_time(s["at"]), s["step"]) for s in feed.get("samples", []))
    return sorted((when, step) for when, step in pairs if when is not None)


def feed_of(run: dict[str, Any], *, now: datetime, live: bool, incidents: dict[str, IncidentView],
            hang_ladder: str | None) -> Feed | None:
    """What the run page shows of the feed; None for a run without one (the page shows nothing)."""
    feed = run.get("feed")
    if not feed:
        return None
    heartbeat = parse_time(feed.get("heartbeat_at"))
    # a heartbeat from the future (the node's clock runs fast) says nothing of when the run last
    # made progress: it has no age and is never recent; a live run shows it red, named
    skew = ahead(heartbeat, now) if heartbeat is not None else None
    age = heartbeat_age(heartbeat, now) if heartbeat is not None and skew is None else None
    stall_after = timedelta(minutes=stall_minutes(run)[0])
    samples = _samples(feed)
    return Feed(
        heartbeat_at=heartbeat, age=age, ahead=skew, stall_after=stall_after,
        watched=live and age is not None,
        stalled=is_stalled(age, stall_after, live=live) or (live and skew is not None),
        hours=steps_per_hour(samples, window_end(samples, now, live=live)) if samples else [],
        events=recent_events(feed.get("events", []), incidents), hang_ladder=hang_ladder)
