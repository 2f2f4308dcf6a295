"""Dates as logbooks write them, read into the schema's forms, saying when it had to guess.

The schema takes a timestamp with an offset, or as much of a date as is known (2022-06-14,
2022-06, 2022). A logbook holds "2022-06-14 03:00" (no zone: taken as UTC, or the mapping's
zone), "14/06/2022", "June 2022", "Q3 2022" (only the year is certain) or "2022-02-30" (only
the month is real). Whatever is read loosely comes back with the reason, for the report.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

from tooling.records.schema import field_spec
from tooling.rules.time_rules import EARLIEST, LATEST

MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = r"(?P<month>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_ORD = r"(?:st|nd|rd|th)?"
_TIME = r"(?:(?:[Tt]|\s+|,\s*)(?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2}))?)?\s*(?P<zone>Z|UTC|GMT|[+-]\d{2}:?\d{2})?"
_ISO = re.compile(r"(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})" + _TIME, re.I)
_NUMERIC = re.compile(r"(?P<a>\d{1,2})[-/.](?P<b>\d{1,2})[-/.](?P<y>\d{4})" + _TIME, re.I)
_NAMED = re.compile(rf"(?:(?P<d1>\d{{1,2}}){_ORD}\s+(?:of\s+)?)?{_MONTH}\s*"  # 14 June, 14th of June, June
                    rf"(?:(?P<d2>\d{{1,2}}){_ORD},?\s+)?,?\s*(?P<y>\d{{4}})" + _TIME, re.I)  # June 14, 2022
_MONTH_YEAR = re.compile(r"(?P<y>\d{4})[-/.](?P<m>\d{1,2})|(?P<m2>\d{1,2})[-/.](?P<y2>\d{4})")
_YEAR = re.compile(r"(?<!\d)(?P<y>\d{4})(?!\d)")


@dataclass(frozen=True)
class DateRules:
    """What the mapping says about its dates (``dates:``)."""

    timezone: str | None = None  # offset for times written without one; None: UTC, reported
    day_first: bool | None = None  # 03/04/2022; None: month first unless that is impossible, reported


@dataclass(frozen=True)
class Reading:
    value: str | None  # a schema form, or None when no date could be read at all
    guess: str | None = None  # why the value is a guess, when it is one


def read_date(text: str, rules: DateRules = DateRules()) -> Reading:
    text = " ".join(text.split())
    if _schema_form(text):
        return Reading(text)
    for whole in (_iso, _numeric, _named):
        found = whole(text, rules, full=True)
        if found is not None:
            return found
    found = _month_year(text, full=True) or _year(text, full=True)
    if found is not None:
        return found
    return _somewhere(text, rules)


def _schema_form(text: str) -> bool:
    """Already as the schema writes it, and a real date in the years records hold."""
    if not re.fullmatch(field_spec("incident", "detected_at")["pattern"], text):
        return False
    if len(text) > 10:
        try:
            when = datetime.fromisoformat(text.replace("z", "Z"))
        except ValueError:
            return False
        return _in_range(when.year) and when.tzinfo is not None
    parts = [int(p) for p in text.split("-")] + [1, 1]
    return _real(*parts[:3])


def _real(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return False
    return _in_range(year)


def _in_range(year: int) -> bool:
    return EARLIEST.year <= year <= LATEST.year


def _match(pattern: re.Pattern[str], text: str, full: bool) -> re.Match[str] | None:
    return pattern.fullmatch(text) if full else pattern.search(text)


def _iso(text: str, rules: DateRules, *, full: bool) -> Reading | None:
    m = _match(_ISO, text, full)
    return _stamp(m, int(m["y"]), int(m["m"]), int(m["d"]), rules) if m else None


def _numeric(text: str, rules: DateRules, *, full: bool) -> Reading | None:
    m = _match(_NUMERIC, text, full)
    if m is None:
        return None
    a, b = int(m["a"]), int(m["b"])
    day_first = rules.day_first if rules.day_first is not None else a > 12
    reading = _stamp(m, int(m["y"]), *((b, a) if day_first else (a, b)), rules)
    if reading is None or rules.day_first is not None or a > 12 or b > 12 or a == b:
        return reading
    why = f"{m.group(0)!r} read month first; set dates.day_first in the mapping if it is day first"
    return Reading(reading.value, _join(reading.guess, why))


def _named(text: str, rules: DateRules, *, full: bool) -> Reading | None:
    m = _match(_NAMED, text, full)
    if m is None:
        return None
    month = MONTH_NAMES.index(m["month"][:3].lower()) + 1
    day = m["d1"] or m["d2"]
    if day is None:
        return _partial(int(m["y"]), month) if m["H"] is None else None
    return _stamp(m, int(m["y"]), month, int(day), rules)


def _stamp(m: re.Match[str], year: int, month: int, day: int, rules: DateRules) -> Reading | None:
    """A day, or a timestamp with an offset when the text gives a time of day."""
    if not _real(year, month, day):
        return None
    when = f"{year:04d}-{month:02d}-{day:02d}"
    if m["H"] is None:
        return Reading(when)
    hour, minute, second = int(m["H"]), int(m["M"]), int(m["S"] or 0)
    if hour > 23 or minute > 59 or second > 59:
        return None
    clock = f"{when}T{hour:02d}:{minute:02d}:{second:02d}"
    zone = (m["zone"] or "").upper()
    if zone in ("Z", "UTC", "GMT"):
        return Reading(clock + "+00:00")
    if zone:
        return Reading(clock + zone[:3] + ":" + zone[-2:])
    if rules.timezone is not None:
        return Reading(clock + rules.timezone)
    return Reading(clock + "+00:00", "no time zone given; taken as UTC")


def _partial(year: int, month: int | None = None) -> Reading | None:
    if month is None:
        return Reading(f"{year:04d}") if _in_range(year) else None
    return Reading(f"{year:04d}-{month:02d}") if _real(year, month, 1) else None


def _month_year(text: str, *, full: bool) -> Reading | None:
    m = _match(_MONTH_YEAR, text, full)
    if m is None:
        return None
    return _partial(int(m["y"] or m["y2"]), int(m["m"] or m["m2"]))


def _year(text: str, *, full: bool) -> Reading | None:
    m = _match(_YEAR, text, full)
    return _partial(int(m["y"])) if m else None


def _somewhere(text: str, rules: DateRules) -> Reading:
    """The most precise date found inside other words ('~2022-06-14', 'Q3 2022', '2022-02-30')."""
    for find in (lambda: _iso(text, rules, full=False) or _numeric(text, rules, full=False)
                 or _named(text, rules, full=False),
                 lambda: _month_year(text, full=False),
                 lambda: _year(text, full=False)):
        found = find()
        if found is not None and found.value is not None:
            kept = {4: "the year", 7: "the month", 10: "the day"}.get(len(found.value), "the time")
            return Reading(found.value, _join(f"only {kept} could be read from {text!r}", found.guess))
    return Reading(None, f"no date could be read from {text!r}")


def _join(first: str | None, second: str | None) -> str | None:
    return "; ".join(p for p in (first, second) if p) or None


def day_of(value: str) -> str:
    """A stamp cut to its date (a partial date stays as it is)."""
    return value[:10]
