"""Template filters and the jinja2 environment: formatting only, no computation."""
from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache, partial
from typing import Any, Callable

import jinja2
from babel.dates import format_date, format_skeleton
from babel.lists import format_list
from babel.numbers import get_decimal_symbol, get_group_symbol, get_minus_sign_symbol
from markupsafe import Markup

from tooling.analysis.incidents import IncidentView
from tooling.messages import N_
from tooling.records.model import parse_time, precision
from tooling.site.escape import code, html_text, link, md_block, md_inline, meta_title, nav_label, nav_section
from tooling.site.i18n import ENGLISH, Edition

# Sort key of a duration that has not ended (an open incident): longer than any real one, so
# that sorting by time to resolve puts what is still open with the slowest.
STILL_OPEN = 10**9
# Sort key of a missing due date: after every real date, as an item without a deadline is.
NO_DATE = "9999-12-31"


def dt(value: Any, *, t: Edition = ENGLISH) -> str:
    """A point in time as the edition writes it: '2026-11-30 16:00 UTC' in English,
    '2026년 11월 30일 16:00 UTC' in Korean (the locale's long date, a 24-hour clock, in UTC
    whatever zone the record was written in; a time without a zone as written). A partial date (2022-06) is shown as known, not as midnight of its first day."""
    if isinstance(value, str) and precision(value) not in (None, "time"):
        return day(value, t=t)
    when = value if isinstance(value, datetime) else parse_time(value)
    if when is None:
        return str(value or "")
    if when.tzinfo is not None:  # one zone on every page: a record written at +09:00 is shown in UTC
        when = when.astimezone(timezone.utc)
    zone = when.strftime("%z").replace("+0000", "UTC")
    if t.default:
        return when.strftime("%Y-%m-%d %H:%M ") + zone
    return f"{format_date(when, 'long', locale=t.locale)} {when:%H:%M} {zone}"


def day(value: Any, *, t: Edition = ENGLISH) -> str:
    """A date, or a partial one (a due date, 2022-06): as written in English, the locale's
    words in another edition ('2026년 11월 1일', '2022년 6월')."""
    if t.default or value is None or value == "":
        return str("" if value is None else value)
    kind = precision(str(value)) if not isinstance(value, date) else "day"
    when = value if isinstance(value, date) else parse_time(str(value))
    if when is None or kind is None:
        return str(value)
    skeleton = {"year": "y", "month": "yMMM"}.get(kind)
    return format_skeleton(skeleton, when, locale=t.locale) if skeleton else format_date(when, "long", locale=t.locale)


def month_day(value: date, *, t: Edition = ENGLISH) -> str:
    """A week's first day on a chart's axis: '11-30', or the locale's short form ('11. 30.')."""
    return value.strftime("%m-%d") if t.default else format_skeleton("Md", value, locale=t.locale)


def _decimal(value: float, spec: str, t: Edition) -> str:
    """``value`` by a Python format spec in every edition, with the locale's separators and
    minus sign. The digits are Python's in each edition (one rounding, the same figures), and
    every spec a template can pass is known to every locale: a table of Babel patterns per spec
    had only the specs written down then, and ``fixed(2)`` broke the Korean build."""
    text = format(value, spec)
    return text if t.default else text.translate(_symbols(t.lang))


@lru_cache(maxsize=None)
def _symbols(lang: str) -> dict[int, str]:
    """What Python writes (',' '.' '-') mapped to the locale's symbols, in one pass (a locale
    may swap ',' and '.')."""
    return str.maketrans({",": get_group_symbol(lang), ".": get_decimal_symbol(lang),
                          "-": get_minus_sign_symbol(lang)})


def grouped(value: float | int, *, t: Edition = ENGLISH) -> str:
    """A count with thousands separated, as ``"{:,}".format`` writes it in English."""
    return _decimal(value, ",", t)


def fixed(value: float, digits: int = 1, *, grouping: bool = False, t: Edition = ENGLISH) -> str:
    """A figure to ``digits`` decimals (a percentage, an amount), as "%.1f" writes it."""
    return _decimal(value, f"{',' if grouping else ''}.{digits}f", t)


def hours(delta: timedelta | None, *, t: Edition = ENGLISH) -> str:
    if delta is None:
        return ""
    total = delta.total_seconds()
    if total < 3600:
        return t.gettext("%(value)s min") % {"value": _decimal(total / 60, ".0f", t)}
    if total < 72 * 3600:
        return t.gettext("%(value)s h") % {"value": _decimal(total / 3600, ".1f", t)}
    return t.gettext("%(value)s days") % {"value": _decimal(total / 86400, ".1f", t)}


# How a time since a heartbeat is said, by size. freshness.js says it with the same words: the
# page hands it this edition's (see tooling.site.freshness.elapsed_words).
ELAPSED = {"under": N_("under 1 min"), "min": N_("%(minutes)s min"), "h": N_("%(hours)s h"),
           "h_min": N_("%(hours)s h %(minutes)s min"), "days": N_("%(days)s days"),
           "days_h": N_("%(days)s days %(hours)s h")}


def elapsed(delta: timedelta, *, t: Edition = ENGLISH) -> str:
    """Time since a heartbeat, to the minute, as a reader says it: 'under 1 min', '4 min',
    '2 h 10 min', '3 days 4 h'. freshness.js writes it the same way at view time (its
    ``elapsed``); tests/site/test_run_feed.py holds the two to the same text."""
    minutes = max(int(delta.total_seconds() // 60), 0)
    hours, days = minutes // 60, minutes // 1440
    if minutes < 1:
        key = "under"
    elif minutes < 60:
        key = "min"
    elif hours < 48:
        key = "h_min" if minutes % 60 else "h"
    else:
        key = "days_h" if hours % 24 else "days"
    return t.gettext(ELAPSED[key]) % {"minutes": minutes % 60, "hours": hours if hours < 48 else hours % 24,
                                      "days": days}


def seconds(value: float, *, t: Edition = ENGLISH) -> str:
    if value < 120:
        return t.gettext("%(value)s s") % {"value": _decimal(value, "g", t)}
    if value < 7200:
        return t.gettext("%(value)s min") % {"value": _decimal(value / 60, "g", t)}
    return t.gettext("%(value)s h") % {"value": _decimal(value / 3600, "g", t)}


def number(value: float | int | None, *, t: Edition = ENGLISH) -> str:
    """A quantity for a table column: thousands separated, whole numbers without '.0'
    (3,938 GPU-hours, not 3,938.0), others to one decimal."""
    if value is None:
        return ""
    return _decimal(value, ",.0f" if float(value).is_integer() else ",.1f", t)


def in_hours(delta: timedelta | None, *, t: Edition = ENGLISH) -> str:
    """A duration in hours to one decimal, the one unit of a column that has to sort."""
    return "" if delta is None else _decimal(delta.total_seconds() / 3600, ",.1f", t)


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
    return _consecutive(views, lambda view: view.detected.strftime("%Y-%m"))


def groupby_year(months: list[tuple[str, list[IncidentView]]]) -> list[tuple[str, list[tuple[str, Any]]]]:
    """Consecutive months ('2026-11', as groupby_month names them) grouped by their year."""
    return _consecutive(months, lambda month: month[0][:4])


def _consecutive(items: list[Any], key: Callable[[Any], str]) -> list[tuple[str, list[Any]]]:
    groups: list[tuple[str, list[Any]]] = []
    for item in items:
        if not groups or groups[-1][0] != key(item):
            groups.append((key(item), []))
        groups[-1][1].append(item)
    return groups


def _fill(text: str, values: dict[str, Any]) -> Markup:
    """A translated message with its values: the message is the template's own markup (it may
    hold markdown or a span), each value is escaped as any ``{{ value }}`` is, unless it is
    markup already (a link). Always %-formatted, as jinja2's newstyle gettext does."""
    return Markup(text) % {key: md_inline(value) for key, value in values.items()}


def template_gettext(t: Edition) -> dict[str, Callable[..., Markup]]:
    """``_``, ``gettext`` and ``ngettext`` for the templates (jinja2.ext.i18n, newstyle: the
    values come as keyword arguments, ``num`` being the count of a plural)."""

    def gettext(message: str, **values: Any) -> Markup:
        return _fill(t.gettext(message), values)

    def ngettext(singular: str, plural: str, n: int, **values: Any) -> Markup:
        values.setdefault("num", n)
        return _fill(t.ngettext(singular, plural, n), values)

    return dict(gettext=gettext, ngettext=ngettext)


def span(attribute: str, text: Any) -> Markup:
    """``<span data-x>text</span>``: an element freshness.js refills, inside a message."""
    return Markup(f"<span {attribute}>") + md_inline(text) + Markup("</span>")


def listing(values: Any, *, each: Any = None, conjunction: bool = False, t: Edition = ENGLISH) -> Markup:
    """Items in a sentence: 'a, b, c', or with ``conjunction`` 'a, b and c' (the locale's
    list pattern elsewhere: 'a, b 및 c'). ``each`` turns a value into its item: a function
    (``code``) or a mapping of words."""
    if each is None:
        items = [md_inline(v) for v in values]
    else:
        items = [md_inline(each[v] if isinstance(each, dict) else each(v)) for v in values]
    if not conjunction or len(items) < 2:
        return Markup(", ").join(items)
    if t.default:
        return Markup(", ").join(items[:-1]) + Markup(" and ") + items[-1]
    return Markup(format_list([str(i) for i in items], locale=t.locale))


@lru_cache(maxsize=None)
def environment(t: Edition = ENGLISH) -> jinja2.Environment:
    """The templates' environment for one edition: its catalogue installed, its formats. One per
    edition and process: it keeps the templates it compiled (most of a small site's render time),
    for the next render of `tooling serve` (a changed template file is read again)."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("tooling.site", "templates"),
                             finalize=md_inline, autoescape=False, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True, extensions=["jinja2.ext.i18n"])
    env.newstyle_gettext = True  # type: ignore[attr-defined]  # values as keyword arguments
    env.globals.update(template_gettext(t))
    edition = {name: partial(f, t=t) for name, f in dict(
        dt=dt, day=day, hours=hours, elapsed=elapsed, seconds=seconds, number=number, in_hours=in_hours,
        grouped=grouped, fixed=fixed).items()}
    env.filters.update(block=md_block, meta_title=meta_title, nav_label=nav_label, nav_section=nav_section,
                       groupby_month=groupby_month, groupby_year=groupby_year, sort_key=sort_key, **edition)
    env.globals.update(link=link, code=code, anchor=anchor, still_open=STILL_OPEN, no_date=NO_DATE, span=span,
                       listing=partial(listing, t=t), lang=t.lang, lang_default=t.default)
    return env
