"""Template filters and the jinja2 environment: formatting only, no computation."""
from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

import jinja2
from markupsafe import Markup

from tooling.analysis.incidents import IncidentView
from tooling.records.model import parse_time, precision
from tooling.site.escape import link, md_block, md_inline, meta_title, nav_label


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


def seconds(value: float) -> str:
    return f"{value:g} s" if value < 120 else f"{value / 60:g} min" if value < 7200 else f"{value / 3600:g} h"


def code(text: Any) -> Markup:
    """An inline code span that holds any text, backticks included."""
    body = " ".join(str(text).split())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", body)), default=0) + 1)
    return Markup(f"{fence} {body} {fence}")


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
    env.filters.update(dt=dt, hours=hours, seconds=seconds, block=md_block, meta_title=meta_title,
                       nav_label=nav_label, groupby_month=groupby_month)
    env.globals.update(link=link, code=code, anchor=anchor)
    return env
