"""The incident log and the action-item board in real Chromium: every column on a laptop,
cards on a phone, numbers that read and sort as numbers."""
from __future__ import annotations

from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tooling.site.filters import NO_DATE, STILL_OPEN, in_hours, number, sort_key

LOG = "/generated/incidents/"
BOARD = "/generated/postmortems/action-items/"
# What a reader must see of every row without scrolling sideways (the cells' data-label).
REQUIRED = {LOG: ["Incident", "Title", "Severity", "Status"],
            BOARD: ["Postmortem", "#", "Action", "Due", "Status", "Flag"]}

# Per page: the viewport width, the page's own horizontal overflow, the table's, and every
# non-empty cell that is not entirely inside the viewport (label, row, left, right).
_LAYOUT = """() => {
  const wrap = document.querySelector('.playbook-table .md-typeset__scrollwrap');
  const outside = [];
  document.querySelectorAll('.playbook-table tbody tr').forEach((tr, row) => {
    tr.querySelectorAll('td').forEach(td => {
      if (!td.textContent.trim()) return;
      const box = td.getBoundingClientRect();
      if (box.width === 0 || box.left < 0 || box.right > innerWidth)
        outside.push([td.dataset.label, row, Math.round(box.left), Math.round(box.right)]);
    });
  });
  return {width: innerWidth, page: document.documentElement.scrollWidth - innerWidth,
          table: wrap.scrollWidth - wrap.clientWidth, outside,
          labels: [...document.querySelectorAll('.playbook-table tbody tr:first-child td')].map(td => td.dataset.label)};
}"""


@contextmanager
def _opened(browser: Browser, url: str, width: int) -> Iterator[Page]:
    """A tab of its own at ``width`` x 900 px, with the table made sortable."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        tab = context.new_page()
        tab.goto(url)
        tab.wait_for_load_state("load")
        expect(tab.locator(".playbook-table th[role=columnheader]").first).to_be_attached()  # tablesort ran
        yield tab
    finally:
        context.close()


@pytest.fixture(params=[(LOG, 1280), (LOG, 1920), (LOG, 390), (BOARD, 1280), (BOARD, 390),
                        ("/ko" + LOG, 390), ("/ko" + BOARD, 390)],
                ids=["log-1280", "log-1920", "log-390", "board-1280", "board-390", "ko-log-390", "ko-board-390"])
def sized(request: pytest.FixtureRequest, browser: Browser, site_url: str) -> Iterator[tuple[Page, str, int]]:
    path, width = request.param
    with _opened(browser, site_url + path, width) as tab:
        yield tab, path, width


def test_every_field_of_every_row_is_inside_the_viewport(sized: tuple[Page, str, int]) -> None:
    page, path, width = sized
    layout = page.evaluate(_LAYOUT)
    assert layout["width"] == width
    assert layout["page"] == 0 and layout["table"] == 0, "nothing scrolls sideways"
    assert layout["outside"] == []
    required = REQUIRED.get(path, layout["labels"])  # the Korean edition: each of its own labels
    assert required and set(required) <= set(layout["labels"])
    rows = page.locator(".playbook-table tbody tr")
    for label in required:  # and every row has its required fields laid out
        cells = page.locator(f".playbook-table tbody td[data-label='{label}']")
        assert cells.count() == rows.count()


def test_a_laptop_gets_a_table_and_a_phone_gets_cards(browser: Browser, site_url: str) -> None:
    for width, row_display, header_display in ((1280, "table-row", "table-cell"), (390, "flex", "block")):
        with _opened(browser, site_url + LOG, width) as page:
            first = page.locator(".playbook-table tbody tr").first
            assert first.evaluate("tr => getComputedStyle(tr).display") == row_display
            heading = page.locator(".playbook-table th", has_text="Severity")
            expect(heading).to_be_visible()
            assert heading.evaluate("th => getComputedStyle(th).display") == header_display
            if width == 390:  # a card labels its fields; the title is a line of its own
                severity = first.locator("td[data-label='Severity']")
                assert severity.evaluate("td => getComputedStyle(td, '::before').content") == '"Severity: "'
                title = first.locator("td.title").bounding_box()
                card = first.bounding_box()
                assert title is not None and card is not None and title["width"] > card["width"] * 0.8


def test_the_phone_cards_say_sort_by_in_each_editions_words(browser: Browser, site_url: str) -> None:
    """Issue 26: the Korean edition said "Sort by", written into the CSS."""
    for path, words in ((LOG, '"Sort by"'), ("/ko" + LOG, '"정렬 기준"')):
        with _opened(browser, site_url + path, 390) as page:
            row = page.locator(".playbook-table thead tr").first
            assert row.evaluate("tr => getComputedStyle(tr, '::before').content") == words


def test_the_title_column_is_wide_enough_to_read_at_1280(browser: Browser, site_url: str) -> None:
    with _opened(browser, site_url + LOG, 1280) as page:
        title = page.locator(".playbook-table th", has_text="Title").bounding_box()
        assert title is not None and title["width"] >= 200
        heights = page.locator(".playbook-table tbody tr").evaluate_all(
            "rows => rows.map(r => r.getBoundingClientRect().height)")
        assert max(heights) < 100  # at most four lines of text; the squeezed title took eight


def _column(page: Page, label: str) -> list[tuple[str, str]]:
    """(text, data-sort) of one column's cells, top to bottom."""
    return page.locator(f".playbook-table tbody td[data-label='{label}']").evaluate_all(
        "cells => cells.map(td => [td.textContent.trim(), td.dataset.sort ?? ''])")


def test_numbers_are_right_aligned_in_one_unit_without_a_trailing_zero(browser: Browser, site_url: str) -> None:
    with _opened(browser, site_url + LOG, 1280) as page:
        rows = {row[1]: row[8:] for row in page.locator(".playbook-table tbody tr").evaluate_all(
            "rows => rows.map(r => [...r.cells].map(td => td.textContent.trim()))")}
        assert rows["INC-0013"] == ["2,349", "open"]  # GPU-hours lost, resolved after (h)
        assert rows["INC-0012"] == ["494", "80.5"]
        assert rows["INC-0011"] == ["230", "62.0"]
        assert rows["INC-0001"] == ["1,067", "30.9"]
        cell = page.locator(".playbook-table tbody td[data-label='GPU-h lost']").first
        assert cell.evaluate("td => getComputedStyle(td).textAlign") == "right"
        heading = page.locator(".playbook-table th", has_text="Resolved after (h)")
        assert heading.evaluate("th => getComputedStyle(th).textAlign") == "right"


def _key(sort: str) -> float:
    return float(sort) if sort else 0.0


def test_time_to_resolve_sorts_as_hours_with_open_incidents_last(browser: Browser, site_url: str) -> None:
    with _opened(browser, site_url + LOG, 1280) as page:
        page.locator(".playbook-table th", has_text="Resolved after (h)").click()
        column = _column(page, "Resolved after (h)")
        keys = [_key(sort) for _, sort in column]
        assert keys == sorted(keys)
        assert [text for text, _ in column][-3:] == ["open", "open", "open"]
        assert "80.5" in [text for text, _ in column]
        page.locator(".playbook-table th", has_text="Resolved after (h)").click()
        assert [_key(sort) for _, sort in _column(page, "Resolved after (h)")] == sorted(keys, reverse=True)


def test_detection_time_sorts_by_the_instant_in_utc(browser: Browser, site_url: str) -> None:
    with _opened(browser, site_url + LOG, 1280) as page:
        page.locator(".playbook-table th", has_text="Detected").click()
        keys = [sort for _, sort in _column(page, "Detected")]
        assert keys == sorted(keys) and keys[0].endswith("Z") and len(set(keys)) == len(keys)


def test_due_dates_sort_on_a_phone_too(browser: Browser, site_url: str) -> None:
    with _opened(browser, site_url + BOARD, 390) as page:
        page.locator(".playbook-table th", has_text="Due").click()  # a sort button above the cards
        column = _column(page, "Due")
        assert [sort for _, sort in column] == sorted(sort for _, sort in column)
        assert [text for text, _ in column] == [sort for _, sort in column]  # ISO dates: shown as sorted
        overdue = page.locator(".playbook-table tbody tr", has_text="Drain nodes on Xid 79 automatically")
        expect(overdue.locator("td[data-label='Due']")).to_have_text("2026-11-01")
        expect(overdue.locator("td[data-label='Flag']")).to_have_text("overdue")


def test_cell_values_and_their_sort_keys() -> None:
    assert [number(v) for v in (3938.0, 3938, 12.4, 0, None)] == ["3,938", "3,938", "12.4", "0", ""]
    assert [in_hours(timedelta(minutes=m)) for m in (12, 90, 4830)] == ["0.2", "1.5", "80.5"]
    assert in_hours(None) == ""
    tokyo = datetime(2026, 11, 20, 12, 3, tzinfo=timezone(timedelta(hours=9)))
    assert str(sort_key(tokyo)) == "2026-11-20T03:03:00Z"  # sorts with UTC times of the same instant
    assert str(sort_key(timedelta(hours=80, minutes=29))) == "80.4833"
    assert str(sort_key(494.0)) == "494.0000" and str(sort_key(7)) == "7"
    assert str(sort_key(None, missing=NO_DATE)) == "9999-12-31" and str(sort_key("2026-11-01")) == "2026-11-01"
    assert STILL_OPEN > 24 * 365 * 100  # longer than any real time to resolve, in hours
