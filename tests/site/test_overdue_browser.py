"""The action board's overdue flags by the reader's clock, in real headless Chromium (issue 26 item 7):
an open action item is flagged overdue once the reader's clock is past its due day (UTC), however
long after the build the page is read, as the run page's staleness is decided (freshness.js); the
alert's counts follow the flags shown; the postmortem page's own table does the same. Without
JavaScript the build's flags and counts stay. Both editions.
"""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from site_support import NOW, Opener, page_opener
from tooling.analysis import Analysis, load_analysis
from tooling.analysis.postmortems import ActionItemRow
from tooling.site.i18n import edition

BUILT = datetime.fromisoformat(NOW).astimezone(timezone.utc)
EDITIONS = {"en": "", "ko": "/ko"}


@pytest.fixture(scope="module")
def analysis(built_site: Path) -> Analysis:
    return load_analysis(built_site.parent, now=BUILT)


@pytest.fixture
def open_page(browser: Browser, site_url: str) -> Iterator[Opener]:
    with page_opener(browser, site_url) as opener:
        yield opener


def _overdue_at(rows: list[ActionItemRow], when: datetime) -> list[str]:
    """The descriptions of the open items whose due day is over at ``when`` (UTC)."""
    return sorted(str(r.item["description"]) for r in rows
                  if r.open and r.item.get("due") and date.fromisoformat(str(r.item["due"])) < when.date())


def _flagged(page: Page, descriptions: list[str]) -> list[str]:
    """Which of ``descriptions`` the rows whose overdue flag the reader sees begin with (a row's
    title cell may go on with the candidate it automates)."""
    rows = page.locator("article .action-board tbody tr").filter(has=page.locator(".overdue-flag:visible"))
    titles = [t.strip() for t in rows.locator("td.title").all_inner_texts()]
    return sorted(next((d for d in descriptions if t.startswith(d)), t) for t in titles)


def _counts(page: Page) -> list[str]:
    return page.locator(".action-alert [data-count-of]").all_inner_texts()


@pytest.mark.parametrize("lang", EDITIONS)
def test_an_item_is_overdue_once_the_readers_clock_passes_its_due_day(
        open_page: Opener, analysis: Analysis, lang: str) -> None:
    board = analysis.actions
    unowned = str(sum(1 for r in board if r.unowned))
    path = f"{EDITIONS[lang]}/generated/postmortems/action-items/"
    dues = sorted({date.fromisoformat(str(r.item["due"])) for r in board if r.open and r.item.get("due")})
    later = datetime.combine(dues[-2] + timedelta(days=1), datetime.min.time(), timezone.utc) + timedelta(hours=1)
    assert later > BUILT + timedelta(days=3)  # days after the build, with items due in between
    at_build, afterwards = _overdue_at(board, BUILT), _overdue_at(board, later)
    everything = [str(r.item["description"]) for r in board]
    assert at_build and len(afterwards) > len(at_build)
    page = open_page(path, at=BUILT)
    expect(page.locator("article .action-board tbody tr")).to_have_count(len(board))
    assert _flagged(page, everything) == at_build
    assert _counts(page) == [str(len(at_build)), unowned]
    page = open_page(path, at=later)
    expect(page.locator(".action-alert [data-count-of]").first).to_have_text(str(len(afterwards)))
    assert _flagged(page, everything) == afterwards
    assert _counts(page) == [str(len(afterwards)), unowned]
    # the same on the postmortem page of an item that came due
    item = next(r for r in board if str(r.item["description"]) in afterwards and str(r.item["description"]) not in at_build)
    pm = open_page(f"{EDITIONS[lang]}/generated/postmortems/{item.postmortem}/", at=later)
    row = pm.locator("article table tbody tr", has_text=str(item.item["description"]))
    expect(row.locator(".overdue-flag")).to_be_visible()
    expect(row.locator(".overdue-flag")).to_have_text(edition(lang).gettext("overdue"))
    pm = open_page(f"{EDITIONS[lang]}/generated/postmortems/{item.postmortem}/", at=BUILT)
    expect(pm.locator("article table tbody tr", has_text=str(item.item["description"])).locator(".overdue-flag")).to_be_hidden()


def test_without_javascript_the_builds_flags_stay(open_page: Opener, analysis: Analysis) -> None:
    page = open_page("/generated/postmortems/action-items/", javascript=False)
    assert _flagged(page, [str(r.item["description"]) for r in analysis.actions]) == _overdue_at(analysis.actions, BUILT)
    assert _counts(page) == [str(len(_overdue_at(analysis.actions, BUILT))), str(sum(1 for r in analysis.actions if r.unowned))]
