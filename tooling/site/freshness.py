"""Staleness, on-call and heartbeats at view time: what a reader's browser needs to recompute them.

A page is read long after it was built (the published site is rebuilt hourly, a saved copy
never), so "this page is 3 hours old", "on call now: Diego" and "last heartbeat 4 min ago" are
only true at build time. The templates still write that text for the build's 'now' (what a
reader without JavaScript sees); these helpers add the times it was computed from as data
attributes, and ``docs/assets/javascripts/freshness.js`` recomputes the text with the reader's
clock (durations as ``tooling.site.filters.elapsed`` writes them, in the page's language: an
edition other than English hands the script its words in ``data-elapsed-words``).

Every word shown stays in the templates: the helpers take the sentences from them and only
fill in names and times, as the templates themselves do.
"""
from __future__ import annotations

import json
from datetime import date, datetime, time, timezone
from functools import partial
from typing import Any, Callable

from markupsafe import Markup

from tooling.analysis.postmortems import ActionItemRow
from tooling.analysis.runs import STALE_AFTER, RunCard, Shift, shifts
from tooling.records.model import parse_time
from tooling.records.runs import is_live
from tooling.site.escape import md_inline
from tooling.site.filters import ELAPSED, dt
from tooling.site.i18n import ENGLISH, Edition


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


def elapsed_words(t: Edition) -> str:
    """The edition's words for a time since a heartbeat, as JSON for the script: the forms of
    tooling.site.filters.ELAPSED translated, each with its %(minutes)s, %(hours)s, %(days)s."""
    return json.dumps({key: t.gettext(words) for key, words in ELAPSED.items()}, ensure_ascii=False,
                      separators=(",", ":"))


def feed_attrs_for(t: Edition) -> Callable[[RunCard], Markup]:
    """The template global ``feed_attrs`` for an edition."""

    def feed_attrs(card: RunCard) -> Markup:
        """Attributes of the element holding a run's feed: its heartbeat, from which the script
        recomputes the age, and for a live run the minutes after which the element turns red
        (class ``stalled``) and shows its [data-stalled-alarm]; nothing without a heartbeat, or
        with one from the future, which has no age to recompute (the build named it).
        The script knows the English words for the age; other editions give it theirs."""
        feed = card.feed
        if feed is None or feed.heartbeat_at is None or feed.ahead is not None:
            return Markup("")
        stall = f' data-stall-after-minutes="{int(feed.stall_after.total_seconds() // 60)}"' if feed.watched else ""
        words = "" if t.default else f' data-elapsed-words="{attribute(elapsed_words(t))}"'
        return Markup(f' data-heartbeat-at="{utc(feed.heartbeat_at)}"{stall}{words}')

    return feed_attrs


def reach(person: str, contacts: dict[str, str] | None = None) -> str:
    """A person as the strip names them: with how to reach them when the record says."""
    contact = (contacts or {}).get(person)
    return f"{_inline(person)} ({_inline(contact)})" if contact else _inline(person)


def nobody_text(card: RunCard, call: str, nobody: str) -> str:
    """The text of an empty on-call slot: ``call`` with the run's escalation (and their contact)
    filled in for ``{person}`` when the record names one, so that "nobody scheduled" says whom
    to call; else ``nobody``. Raw text, as :func:`shift_text` gives it."""
    status = card.status
    if status is None or not status.escalation:
        return str(nobody)
    return str(call).format(person=reach(status.escalation, status.contacts))


def shift_text(shift: Shift | None, words: str, nobody: str, *, t: Edition = ENGLISH,
               contacts: dict[str, str] | None = None) -> str:
    """A slot's text, ``words`` with ``{person}`` (and their contact, given ``contacts``),
    ``{start}`` and ``{end}`` filled in: the one function behind the build-time text and the
    texts the script chooses from, so they agree."""
    if shift is None:
        return str(nobody)
    # str(): a translated template message is markup; the names filled in here are record text
    # that the template escapes with the rest of the slot's text
    return str(words).format(person=reach(shift.person, contacts), start=dt(shift.start, t=t), end=dt(shift.end, t=t))


def _shift_entry(shift: Shift, now: str, next: str, t: Edition, contacts: dict[str, str] | None) -> dict[str, str]:
    return {"start": utc(shift.start), "end": utc(shift.end),
            "now": shift_text(shift, now, "", t=t, contacts=contacts),
            "next": shift_text(shift, next, "", t=t, contacts=contacts)}


def oncall_attrs_for(built_at: datetime, t: Edition = ENGLISH) -> Callable[..., Markup]:
    """The template global ``oncall_attrs`` for a build at ``built_at``."""

    def oncall_attrs(card: RunCard, *, now: str, next: str, nobody: str,
                     contacts: dict[str, str] | None = None) -> Markup:
        """Attributes of the element holding the on-call slots: every shift a reader can still
        meet (one over before the build can be neither now nor next) with its text in each
        slot (see :func:`shift_text`), and the text for an empty slot."""
        entries = [_shift_entry(s, str(now), str(next), t, contacts) for s in shifts(card.data) if s.end > built_at]
        data = json.dumps(entries, ensure_ascii=False, separators=(",", ":"))
        return Markup(f' data-oncall="{attribute(data)}" data-oncall-nobody="{attribute(str(nobody))}"')

    return oncall_attrs


def state_attrs_for(t: Edition) -> Callable[[RunCard, dict[str, str]], Markup]:
    """The template global ``state_attrs`` for an edition."""

    def state_attrs(card: RunCard, words: dict[str, str]) -> Markup:
        """Attributes of a status strip's line: its feed (see ``feed_attrs``: the heartbeat and
        the stall threshold of tooling.records.runs), the state the script starts from, and the
        edition's ``words`` for each state; the script says "stalled" once the heartbeat is as
        old as the threshold, unless the run ended."""
        assert card.status is not None, "run_cards gives every card its status"
        said = json.dumps({k: str(v) for k, v in words.items()}, ensure_ascii=False, separators=(",", ":"))
        return feed_attrs_for(t)(card) + Markup(
            f' data-run-base="{card.status.base}" data-run-words="{attribute(said)}"')

    return state_attrs


def since(when: datetime, text: str) -> Markup:
    """A span of ``text``, the time since ``when`` (a checkpoint's save) as the build counts it,
    which the script counts again with the reader's clock."""
    return Markup(f'<span data-age-since="{utc(when)}">') + md_inline(text) + Markup("</span>")


def words_attrs(t: Edition) -> Markup:
    """The edition's words for durations, on an element whose spans the script refills; nothing
    in English, the script's own words."""
    return Markup("") if t.default else Markup(f' data-elapsed-words="{attribute(elapsed_words(t))}"')


def overdue_attrs(row: ActionItemRow) -> Markup:
    """Attributes of an open action item's "overdue" flag: the script shows it once the reader's
    clock is past its due day (UTC, as tooling/analysis/postmortems.py decides it at build time),
    as it shows a run page's stale banner; ``hidden`` while the build says it is not overdue,
    which a reader without JavaScript keeps."""
    hidden = Markup("" if row.overdue else " hidden")
    if not row.open or not row.item.get("due"):  # never overdue
        return hidden
    ends = datetime.combine(date.fromisoformat(str(row.item["due"])), time(23, 59, 59), timezone.utc)
    return Markup(f' data-updated-at="{utc(ends)}" data-stale-after-hours="0"') + hidden


def template_globals(built_at: datetime, t: Edition = ENGLISH) -> dict[str, Callable[..., Any]]:
    return dict(freshness_attrs=freshness_attrs, oncall_attrs=oncall_attrs_for(built_at, t),
                shift_text=partial(shift_text, t=t), feed_attrs=feed_attrs_for(t), state_attrs=state_attrs_for(t),
                since=since, words_attrs=partial(words_attrs, t), reach=reach,
                nobody_text=nobody_text, overdue_attrs=overdue_attrs)
