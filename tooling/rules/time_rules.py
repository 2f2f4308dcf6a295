"""Dates and times in records: each one real, inside the years a training run can live, and in order.

- ``invalid-time``: a value that is not a real calendar date or clock time (2024-02-30).
- ``date-out-of-range``: a date outside :data:`EARLIEST`-:data:`LATEST`. Every other way a date
  comes in (the CLI's time arguments, ``tooling new-incident``, ``tooling import``) holds it to
  the same range, so that what one accepts the validator never rejects.
- ``time-order``: times of one record that go backwards (an incident detected before it
  started, a timeline entry before the one above it, an on-call shift that ends before it starts).
- ``clock-skew`` (warning): a time that says when something happened (a heartbeat, a scheduler
  event, a detection) later than now: the clock of the machine that wrote it runs fast
  (:mod:`tooling.records.clock`). One finding per field, at the time furthest ahead.
"""
from __future__ import annotations

from datetime import date, datetime
from typing import Any, Iterator

from tooling.records.clock import span, value_ahead
from tooling.records.findings import Finding, Severity
from tooling.records.locate import Keys, finding_at, locate
from tooling.records.model import Record, parse_time, same_or_later

# Dates a training record can sanely hold. Outside this, a typo (0001-01-01) would make every
# analysis that walks the calendar (weekly trends) walk millennia.
EARLIEST, LATEST = date(1990, 1, 1), date(2099, 12, 31)

# Where each kind keeps dates and times; '*' is every item of a list.
_TIME_PATHS: dict[str, tuple[str, ...]] = {
    "incident": ("started_at", "detected_at", "mitigated_at", "resolved_at", "timeline.*.at"),
    "postmortem": ("created", "reviewed_on", "timeline.*.at", "action_items.*.due", "action_items.*.done_on",
                   "review.date"),
    "run": ("last_good_checkpoint.saved_at", "debugging.*.since", "oncall.shifts.*.start",
            "oncall.shifts.*.end", "updated_at"),
}

# The times of _TIME_PATHS (and the feed's) that say when something happened, which cannot be
# later than now: a due date, a shift or a review meeting may be
_HAPPENED: dict[str, tuple[str, ...]] = {
    "incident": ("started_at", "detected_at", "mitigated_at", "resolved_at", "timeline.*.at"),
    "postmortem": ("created", "reviewed_on", "timeline.*.at", "action_items.*.done_on"),
    "run": ("feed.heartbeat_at", "feed.events.*.at", "feed.samples.*.at", "last_good_checkpoint.saved_at",
            "debugging.*.since", "updated_at"),
}


def check_times(records: list[Record]) -> Iterator[Finding]:
    """invalid-time (not a real date), date-out-of-range and time-order."""
    for record in records:
        for keys, value in _time_values(record):
            when = parse_time(value)
            if when is None:
                yield finding_at(record, keys, "invalid-time", f"'{value}' is not a real date or time; "
                                 "expected a valid calendar date and clock time")
            elif not EARLIEST <= when.date() <= LATEST:
                yield finding_at(record, keys, "date-out-of-range", f"{value} is outside the years "
                                 f"{EARLIEST.year}-{LATEST.year}; expected a date in the life of a training run")
        yield from _ordered(record, _time_pairs(record))


def _time_values(record: Record) -> Iterator[tuple[Keys, Any]]:
    for path in _TIME_PATHS.get(record.kind, ()):
        yield from _values(record.data, path)


def _values(data: dict[str, Any], path: str) -> Iterator[tuple[Keys, Any]] | tuple[tuple[Keys, Any], ...]:
    """(keys, value) of each value at ``path`` ("timeline.*.at"): a top-level field read directly,
    as most are (the rules read every time of 100,000 records in each command)."""
    if "." not in path and isinstance(data, dict):
        return (([path], data[path]),) if path in data else ()
    return _expand(data, path.split("."), [])


def _expand(data: Any, parts: list[str], keys: Keys) -> Iterator[tuple[Keys, Any]]:
    if not parts:
        yield keys, data
    elif parts[0] == "*" and isinstance(data, list):
        for i, item in enumerate(data):
            yield from _expand(item, parts[1:], [*keys, i])
    elif isinstance(data, dict) and parts[0] in data:
        yield from _expand(data[parts[0]], parts[1:], [*keys, parts[0]])


def _time_pairs(record: Record) -> list[tuple[Keys, Keys]]:
    """(earlier, later): the times of ``record`` that must not go backwards."""
    data = record.data
    pairs: list[tuple[Keys, Keys]] = []
    if record.kind == "incident":
        present = [k for k in ("started_at", "detected_at", "mitigated_at", "resolved_at") if k in data]
        pairs += [([a], [b]) for a, b in zip(present, present[1:])]
    for field in ("timeline",):
        pairs += [([field, i, "at"], [field, i + 1, "at"]) for i in range(len(data.get(field, [])) - 1)]
    if record.kind == "run":
        for i, _ in enumerate(data.get("oncall", {}).get("shifts", [])):
            pairs.append((["oncall", "shifts", i, "start"], ["oncall", "shifts", i, "end"]))
    return pairs


def _ordered(record: Record, pairs: list[tuple[Keys, Keys]]) -> Iterator[Finding]:
    for earlier_keys, later_keys in pairs:
        earlier, later = _value(record.data, earlier_keys), _value(record.data, later_keys)
        if same_or_later(earlier, later) is False:
            yield finding_at(record, later_keys, "time-order",
                             f"{_name(later_keys)} {later} is before {_name(earlier_keys)} {earlier}; "
                             f"expected it at or after")


def _value(data: Any, keys: Keys) -> Any:
    for key in keys:
        data = data[key] if isinstance(data, (dict, list)) and _has(data, key) else None
    return data


def _has(data: dict[str, Any] | list[Any], key: str | int) -> bool:
    return key in data if isinstance(data, dict) else isinstance(key, int) and key < len(data)


def _name(keys: Keys) -> str:
    return ".".join(f"[{k}]" if isinstance(k, int) else k for k in keys).replace(".[", "[")


def check_clock(records: list[Record], now: datetime) -> Iterator[Finding]:
    """clock-skew (warning): for each field of _HAPPENED, the value furthest ahead of ``now``.

    The message names a list's field without the item's place (the finding's line has it): a
    machine that appends to the list, or drops its oldest items, leaves the message as it was, so
    its write is no new warning to refuse (:func:`tooling.writers.edit.rewrite`)."""
    for record in records:
        for path in _HAPPENED.get(record.kind, ()):
            ahead = [(gap, keys, value) for keys, value in _values(record.data, path)
                     if (gap := value_ahead(value, now)) is not None]
            if not ahead:
                continue
            gap, keys, value = max(ahead, key=lambda found: found[0])
            named = f"a time of {path.split('.*')[0]}, {value}," if "*" in path else f"{path} {value}"
            yield Finding(record.path, *locate(record.path, keys), "clock-skew",
                          f"{named} is {span(gap)} ahead of now ({now.isoformat()}); expected a time that "
                          "has come (the clock of the machine that wrote it runs fast?)", Severity.WARNING)
