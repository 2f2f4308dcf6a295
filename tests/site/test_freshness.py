"""Freshness at view time: a site built once at T and read later, in real headless Chromium.

Playwright sets the browser's clock; nothing is rebuilt between readings, so every change seen
here is freshness.js recomputing the stale banners and on-call from the times in the page.
"""
from __future__ import annotations

import html.parser
from datetime import datetime, timedelta
from typing import Iterator

import markdown
import pytest
from playwright.sync_api import Browser, Page, expect

from site_support import NOW, Opener, build_copy, page_opener, served
from tooling.site.freshness import attribute

T = datetime.fromisoformat(NOW)  # the build's now: 2026-11-29T12:00Z

# Updated at T, so fresh until T+24h; four shifts, back to back from T-6h to T+42h, under
# hostile names (the script must show them as text), one of them written in +09:00.
RELAY_RUN = """kind: run
id: relay-1b
title: Relay 1B
owner: ana
state: running
updated_at: 2026-11-29T12:00:00+00:00
oncall:
  shifts:
    - person: "Ana <b>Lee</b>"
      start: 2026-11-29T06:00:00+00:00
      end: 2026-11-29T18:00:00+00:00
    - person: "<img src=x onerror=alert(1)>"
      start: 2026-11-29T18:00:00+00:00
      end: 2026-11-30T06:00:00+00:00
      night: true
    - person: "Cho [x](javascript:alert(2)) `Park`"
      start: 2026-11-30T15:00:00+09:00
      end: 2026-12-01T03:00:00+09:00
    - person: Dev Rao
      start: 2026-11-30T18:00:00+00:00
      end: 2026-12-01T06:00:00+00:00
      night: true
"""
# Updated 30 h before T: stale at build time already.
OLD_RUN = """kind: run
id: old-2b
title: Old 2B ablation
owner: ben
state: running
updated_at: 2026-11-28T06:00:00+00:00
"""

ANA = "Ana <b>Lee</b>"
IMG = "<img src=x onerror=alert(1)>"
CHO = "Cho [x](javascript:alert(2)) `Park`"
DEMO = "Demo 7B pretraining, 3T tokens on atlas"  # this project's run, updated T-3.5h


@pytest.fixture(scope="module")
def site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """This project's records plus the two runs above, built with --now T and served locally."""
    with served(build_copy(tmp_path_factory.mktemp("freshness-repo"), {"runbooks/runs/relay-1b.yaml": RELAY_RUN, "runbooks/runs/old-2b.yaml": OLD_RUN})) as url:
        yield url


@pytest.fixture
def open_page(browser: Browser, site_url: str) -> Iterator[Opener]:
    """A fresh tab per call, its clock at ``at`` when given (site_support.page_opener)."""
    with page_opener(browser, site_url, at=None) as open_page:
        yield open_page


def expect_on_call(page: Page, now: str, next: str) -> None:
    """The run page's two slots, in its status strip and in its On call section, hold exactly
    this text (the run has no contacts), and nothing but text."""
    expect(page.locator("[data-oncall-slot=now]")).to_have_text([now, now])
    expect(page.locator("[data-oncall-slot=next]")).to_have_text([next, next])
    assert page.locator("[data-oncall-slot] *").count() == 0
    assert page.locator("article img, article script, article a[href^='javascript:' i]").count() == 0


def expect_card_heading(page: Page, card: int, text: str) -> None:
    """A card's first line as the reader sees it (innerText: a hidden ' · stale' is not there)."""
    heading = page.locator(".run-cards > ul > li").nth(card).locator("p").first
    expect(heading).to_have_text(text, use_inner_text=True)


def test_a_page_built_at_T_is_stale_when_read_30_hours_later(open_page: Opener) -> None:
    later = T + timedelta(hours=30)
    page = open_page("/generated/runs/relay-1b/", at=later)
    banner = page.locator(".admonition.stale")
    expect(banner).to_be_visible()
    expect(banner.locator(".admonition-title")).to_have_text("Stale: not updated for 30 hours")
    expect_on_call(page, now="Dev Rao until 2026-12-01 06:00 UTC", next="nobody scheduled")

    page = open_page("/", at=later)
    expect(page.locator(".admonition.stale:visible .admonition-title")).to_have_text([
        f"{DEMO}: this page is 33 hours old",
        "Old 2B ablation: this page is 60 hours old",
        "Relay 1B: this page is 30 hours old",
    ])
    expect_card_heading(page, 0, f"{DEMO} · degraded · stale")
    expect_card_heading(page, 2, "Relay 1B · running · stale")
    cards = page.locator(".run-cards > ul > li")
    expect(cards.nth(0)).to_contain_text(
        "On call now: Priya Raman until 2026-11-30 20:00 UTC · next: Diego Alvarez from 2026-11-30 20:00 UTC")
    expect(cards.nth(2)).to_contain_text("On call now: Dev Rao until 2026-12-01 06:00 UTC · next: nobody scheduled")


def test_fresh_an_hour_after_the_build_and_on_call_follows_the_reader(open_page: Opener) -> None:
    page = open_page("/generated/runs/relay-1b/", at=T + timedelta(hours=1))
    expect(page.locator(".freshness")).to_be_hidden()
    expect_on_call(page, now=f"{ANA} until 2026-11-29 18:00 UTC", next=f"{IMG} from 2026-11-29 18:00 UTC")

    # no reload: the script's minute timer picks up each new time
    page.clock.fast_forward("06:00:00")  # T+7h, across the first boundary
    expect_on_call(page, now=f"{IMG} until 2026-11-30 06:00 UTC", next=f"{CHO} from 2026-11-30 06:00 UTC")  # written +09:00: shown in UTC
    page.clock.fast_forward("12:00:00")  # T+19h, across the second
    expect_on_call(page, now=f"{CHO} until 2026-11-30 18:00 UTC", next="Dev Rao from 2026-11-30 18:00 UTC")
    expect(page.locator(".freshness")).to_be_hidden()

    page.clock.fast_forward("05:30:00")  # T+24.5h: past the 24 hours
    expect(page.locator(".admonition.stale .admonition-title")).to_have_text("Stale: not updated for 24 hours")
    expect(page.locator(".admonition.stale")).to_be_visible()
    page.clock.fast_forward("05:30:00")  # T+30h
    expect(page.locator(".admonition.stale .admonition-title")).to_have_text("Stale: not updated for 30 hours")
    expect_on_call(page, now="Dev Rao until 2026-12-01 06:00 UTC", next="nobody scheduled")


def test_home_page_an_hour_after_the_build(open_page: Opener) -> None:
    page = open_page("/", at=T + timedelta(hours=1))
    # the run stale at build time is an hour older; the others are still fresh
    expect(page.locator(".admonition.stale:visible .admonition-title")).to_have_text(
        ["Old 2B ablation: this page is 31 hours old"])
    assert page.locator(".admonition.stale").count() == 1
    expect_card_heading(page, 0, f"{DEMO} · degraded")
    expect_card_heading(page, 1, "Old 2B ablation · running · stale")
    expect_card_heading(page, 2, "Relay 1B · running")
    expect(page.locator(".run-cards > ul > li").nth(2)).to_contain_text(
        f"On call now: {ANA} until 2026-11-29 18:00 UTC · next: {IMG} from 2026-11-29 18:00 UTC")


def test_without_javascript_the_build_time_text_stays(open_page: Opener) -> None:
    page = open_page("/generated/runs/relay-1b/", javascript=False)
    expect(page.locator(".freshness")).to_be_hidden()
    expect_on_call(page, now=f"{ANA} until 2026-11-29 18:00 UTC", next=f"{IMG} from 2026-11-29 18:00 UTC")

    page = open_page("/generated/runs/old-2b/", javascript=False)
    expect(page.locator(".admonition.stale .admonition-title")).to_have_text("Stale: not updated for 30 hours")
    expect(page.locator(".admonition.stale")).to_be_visible()

    page = open_page("/", javascript=False)
    expect(page.locator(".admonition.stale:visible .admonition-title")).to_have_text(
        ["Old 2B ablation: this page is 30 hours old"])
    expect(page.locator(".run-cards")).to_contain_text(
        "On call now: Diego Alvarez until 2026-11-29 20:00 UTC · next: Mina Park from 2026-11-29 20:00 UTC")
    expect_card_heading(page, 1, "Old 2B ablation · running · stale")
    expect_card_heading(page, 2, "Relay 1B · running")


class _Attributes(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append(dict(attrs))


def test_record_text_in_an_attribute_reaches_the_browser_unchanged() -> None:
    """Python-Markdown runs its backtick, backslash and link patterns before it sets inline HTML
    aside; the encoding leaves none of them anything to match inside the attribute."""
    hostile = 'Cho `Park` [x](javascript:alert(2)) \\ *a* _b_ <img src=x> &amp; "q" \' | {: #id} 한'
    source = f'Now: <span data-oncall="{attribute(hostile)}">text</span> and `code`'
    parser = _Attributes()
    parser.feed(markdown.markdown(source, extensions=["attr_list", "md_in_html", "tables", "admonition"]))
    assert [a for a in parser.found if "data-oncall" in a] == [{"data-oncall": hostile}]
