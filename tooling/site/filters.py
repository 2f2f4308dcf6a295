"""Template filters and the jinja2 environment: formatting only, no computation."""
from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from typing import Any

import jinja2
from markupsafe import Markup

from tooling.analysis.incidents import IncidentView
from tooling.records.model import parse_time, precision
from tooling.site.escape import code, html_text, link, md_block, md_inline, meta_title, nav_label, nav_section

# Sort key of a duration that has not ended (an open incident): longer than any real one, so
# that sorting by time to resolve puts what is still open with the slowest.
STILL_OPEN = 10**9
# Sort key of a missing due date: after every real date, as an item without a deadline is.
NO_DATE = "9999-12-31"


def dt(value: Any) -> str:
    if isinstance(value, str) and precision(value) not in (None, "time"):
        return value  # a partial date (2022-06) is shown as known, not as midnight of its first day
    when = value if isinstance(value, datetime) else parse_time(value)
    return when.strftime("%Y-%m-%d %H:%M %z").replace("+0000", "UTC") if when else str(value or "")


def hours(delta: timedelta | None) -> str:
    if delta is None:
        return ""
    total = delta.total_seconds()
    if total < 3600:
        return f"{total / 60:.0f} min"
    return f"{total / 3600:.1f} h" if total < 72 * 3600 else f"{total / 86400:.1f} days"


def elapsed(delta: timedelta) -> str:
    """Time since a heartbeat, to the minute, as a reader says it: 'under 1 min', '4 min',
    '2 h 10 min', '3 days 4 h'. freshness.js writes it the same way at view time (its
    ``elapsed``); tests/site/test_run_feed.py holds the two to the same text."""
    minutes = max(int(delta.total_seconds() // 60), 0)
    hours, days = minutes // 60, minutes // 1440
    if minutes < 1:
        return "under 1 min"
    if minutes < 60:
        return f"{minutes} min"
    if hours < 48:
        return f"{hours} h" + (f" {minutes % 60} min" if minutes % 60 else "")
    return f"{days} days" + (f" {hours % 24} h" if hours % 24 else "")


def seconds(value: float) -> str:
    return f"{value:g} s" if value < 120 else f"{value / 60:g} min" if value < 7200 else f"{value / 3600:g} h"


def number(value: float | int | None) -> str:
    """A quantity for a table column: thousands separated, whole numbers without '.0'
    (3,938 GPU-hours, not 3,938.0), others to one decimal."""
    if value is None:
        return ""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def in_hours(delta: timedelta | None) -> str:
    """A duration in hours to one decimal, the one unit of a column that has to sort."""
    return "" if delta is None else f"{delta.total_seconds() / 3600:,.1f}"


def sort_key(value: datetime | date | timedelta | float | int | str | None, missing: float | str = "") -> Markup:
    """A ``data-sort`` attribute value that tablesort orders correctly: UTC ISO time for
    timestamps (zones mixed in one column still sort), hours for durations, plain numbers
    without separators, text (ISO dates) as it is; ``missing`` when there is no value."""
    if value is None:
        key: object = missing
    elif isinstance(value, datetime):
        key = value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if value.tzinfo else value.isoformat()
    elif isinstance(value, date):
        key = value.isoformat()
    elif isinstance(value, timedelta):
        key = f"{value.total_seconds() / 3600:.4f}"
    else:
        key = f"{value:.4f}" if isinstance(value, float) else value
    return html_text(key)


def anchor(slug: str) -> Markup:
    """A heading's id for attr_list (``{#gpu-hbm-ecc}``): letters, digits and dashes only."""
    return Markup("{#" + re.sub(r"[^a-z0-9-]", "-", slug.lower()) + "}")


def groupby_month(views: list[IncidentView]) -> list[tuple[str, list[IncidentView]]]:
    """Consecutive incidents grouped by the month they were detected in, order kept."""
    groups: list[tuple[str, list[IncidentView]]] = []
    for view in views:
        month = view.detected.strftime("%Y-%m")
        if not groups or groups[-1][0] != month:
            groups.append((month, []))
        groups[-1][1].append(view)
    return groups


def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("tooling.site", "templates"),
                             finalize=md_inline, autoescape=False, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(dt=dt, hours=hours, elapsed=elapsed, seconds=seconds, block=md_block, meta_title=meta_title,
                       nav_label=nav_label, nav_section=nav_section, groupby_month=groupby_month,
                       number=number, in_hours=in_hours, sort_key=sort_key)
    env.globals.update(link=link, code=code, anchor=anchor, still_open=STILL_OPEN, no_date=NO_DATE)
    return env
