"""Staleness, on-call and heartbeats at view time: what a reader's browser needs to recompute them.

A page is read long after it was built (the published site is rebuilt hourly, a saved copy
never), so "this page is 3 hours old", "on call now: Diego" and "last heartbeat 4 min ago" are
only true at build time. The templates still write that text for the build's 'now' (what a
reader without JavaScript sees); these helpers add the times it was computed from as data
attributes, and ``docs/assets/javascripts/freshness.js`` recomputes the text with the reader's
clock (durations as ``tooling.site.filters.elapsed`` writes them).

Every word shown stays in the templates: the helpers take the sentences from them and only
fill in names and times, as the templates themselves do.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Callable

from markupsafe import Markup

from tooling.analysis.runs import STALE_AFTER, RunCard, Shift, shifts
from tooling.records.model import parse_time
from tooling.records.runs import is_live
from tooling.site.filters import dt


def attribute(value: str) -> str:
    """An attribute value that neither HTML nor markdown can read as markup.

    The attributes sit on inline HTML inside markdown, and Python-Markdown runs its backtick,
    backslash and link patterns before it sets inline HTML aside; so every character but
    letters, digits and a few inert ones becomes a numeric character reference, which the
    browser turns back into the text.
    """
    return "".join(c if c.isalnum() or c in " -:.," else f"&#{ord(c)};" for c in value)


def utc(when: datetime) -> str:
    """A time every browser's ``Date.parse`` reads the same way."""
    return when.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _inline(text: Any) -> str:
    """Record text as the templates show it (runs of whitespace become one space)."""
    return " ".join(str(text).split())


def freshness_attrs(card: RunCard) -> Markup:
    """Attributes of an element the script shows once the run page is older than STALE_AFTER;
    nothing for a run that is not live, whose page never goes stale."""
    updated = parse_time(card.data["updated_at"])
    if not is_live(card.data) or updated is None:
        return Markup("")
    hours = int(STALE_AFTER.total_seconds() // 3600)
    return Markup(f' data-updated-at="{utc(updated)}" data-stale-after-hours="{hours}"')


def feed_attrs(card: RunCard) -> Markup:
    """Attributes of the element holding a run's feed: its heartbeat, from which the script
    recomputes the age, and for a live run the minutes after which the element turns red
    (class ``stalled``) and shows its [data-stalled-alarm]; nothing without a heartbeat."""
    feed = card.feed
    if feed is None or feed.heartbeat_at is None:
        return Markup("")
    stall = f' data-stall-after-minutes="{int(feed.stall_after.total_seconds() // 60)}"' if feed.watched else ""
    return Markup(f' data-heartbeat-at="{utc(feed.heartbeat_at)}"{stall}')


def shift_text(shift: Shift | None, words: str, nobody: str) -> str:
    """A slot's text, ``words`` with ``{person}``, ``{start}`` and ``{end}`` filled in: the one
    function behind the build-time text and the texts the script chooses from, so they agree."""
    if shift is None:
        return nobody
    return words.format(person=_inline(shift.person), start=dt(shift.start), end=dt(shift.end))


def _shift_entry(shift: Shift, now: str, next: str) -> dict[str, str]:
    return {"start": utc(shift.start), "end": utc(shift.end),
            "now": shift_text(shift, now, ""), "next": shift_text(shift, next, "")}


def oncall_attrs_for(built_at: datetime) -> Callable[..., Markup]:
    """The template global ``oncall_attrs`` for a build at ``built_at``."""

    def oncall_attrs(card: RunCard, *, now: str, next: str, nobody: str) -> Markup:
        """Attributes of the element holding the on-call slots: every shift a reader can still
        meet (one over before the build can be neither now nor next) with its text in each
        slot (see :func:`shift_text`), and the text for an empty slot."""
        entries = [_shift_entry(s, now, next) for s in shifts(card.data) if s.end > built_at]
        data = json.dumps(entries, ensure_ascii=False, separators=(",", ":"))
        return Markup(f' data-oncall="{attribute(data)}" data-oncall-nobody="{attribute(nobody)}"')

    return oncall_attrs


def template_globals(built_at: datetime) -> dict[str, Callable[..., Any]]:
    return dict(freshness_attrs=freshness_attrs, oncall_attrs=oncall_attrs_for(built_at), shift_text=shift_text,
                feed_attrs=feed_attrs)
