"""Times that have not come yet: what a clock running fast on the machine that wrote them leaves.

A heartbeat, a scheduler event or any time a record says something happened cannot be later
than now. One that is (a node whose clock runs days fast: NTP down, a VM restored from a
snapshot, a dead RTC battery) says nothing about when it happened, so it is named, never
trusted: ``tooling validate`` reports it (``clock-skew``, :mod:`tooling.rules.time_rules`),
``tooling watch`` says it and does not count such a heartbeat as progress, and the run page
shows it as a clock to fix, never as a heartbeat of a moment ago.

Within :data:`CLOCK_SLACK` two clocks are taken to agree: NTP keeps nodes within milliseconds,
and a write on one machine read a little later on another is normal.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from tooling.records.model import parse_time, precision

CLOCK_SLACK = timedelta(minutes=5)
# A date alone (2026-11-30) is the date somewhere: east of UTC, up to UTC+14, it starts that much
# before it starts in UTC, as parse_time reads it
DATE_SLACK = timedelta(hours=14)


def ahead(when: datetime, now: datetime) -> timedelta | None:
    """How far ``when`` is ahead of ``now``, when it is more than :data:`CLOCK_SLACK`; else None."""
    gap = when - now
    return gap if gap > CLOCK_SLACK else None


def value_ahead(value: Any, now: datetime) -> timedelta | None:
    """:func:`ahead` for a record's value: a timestamp, or a (partial) date, which is ahead only
    once its period has begun nowhere on Earth; None for a value that is not a time."""
    when = parse_time(value)
    if when is None:
        return None
    if precision(value) != "time":
        return when - now if when - now > DATE_SLACK else None
    return ahead(when, now)


def span(gap: timedelta) -> str:
    """A gap between two clocks as a message says it, rounded to its largest unit: '5 days', '3 h',
    '12 min' (a watch's clock has moved on a little since it read the heartbeat)."""
    minutes = gap.total_seconds() / 60
    if minutes >= 2 * 1440:
        return f"{round(minutes / 1440)} days"
    if minutes >= 120:
        return f"{round(minutes / 60)} h"
    return f"{round(minutes)} min"
