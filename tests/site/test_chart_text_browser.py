"""Charts on a 390 px phone, in real headless Chromium (issue 26 item 5): every word of every chart
on the home and trends pages is at least 11 px as rendered, in both editions; the page stays as
wide as the screen (the chart's frame scrolls instead); every chart writes its window; and the
home card's steps chart says it is old once the reader's clock makes the run stalled.

The site is built once at T (site_support.NOW); a later reader is Playwright's clock.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest
from playwright.sync_api import Browser, Page, expect

from tabs import Tabs

from site_support import NOW
from test_accessibility import SCREENS
from tooling.site.filters import dt
from tooling.site.i18n import ENGLISH, edition

EDITIONS = {"en": "", "ko": "/ko"}
T = datetime.fromisoformat(NOW)
PAGES = {"home": "/", "trends": "/generated/trends/"}
SMALLEST = 11  # px, as rendered

# Each chart text's font size times the scale the page draws its SVG at (rendered width over the
# viewBox's), and the height of its box (the width of a text turned upright), which says the same
# from the glyphs' side.
TEXT_SIZES = """() => [...document.querySelectorAll('svg.playbook-chart')].flatMap(svg => {
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return [...svg.querySelectorAll('text')].map(text => [
        text.textContent, parseFloat(getComputedStyle(text).fontSize) * scale,
        text.getBoundingClientRect()[text.hasAttribute('transform') ? 'width' : 'height']]);
})"""


@pytest.fixture(params=list(EDITIONS))
def phone(tabs: Tabs, request: pytest.FixtureRequest) -> tuple[Page, str]:
    """A kept tab on a 390 px phone, its clock at the build's time, with the edition's path prefix."""
    return tabs.tab(clock=NOW, **SCREENS["phone-390"]), request.param


@pytest.mark.parametrize("path", PAGES.values(), ids=PAGES.keys())
def test_chart_text_is_at_least_11_px_on_a_phone(phone: tuple[Page, str], site_url: str, path: str) -> None:
    page, lang = phone
    page.goto(site_url + EDITIONS[lang] + path)
    expect(page.locator("svg.playbook-chart").first).to_be_visible()
    sizes = page.evaluate(TEXT_SIZES)
    assert len(sizes) > 20
    small = [(text, round(size, 1), round(box, 1)) for text, size, box in sizes if size < SMALLEST]
    assert small == []
    assert min(box for text, _, box in sizes if text.strip()) >= SMALLEST  # the glyphs' boxes agree
    assert page.evaluate("document.documentElement.scrollWidth - innerWidth") <= 0, "wider than the screen"
    for frame in page.locator(".chart-frame").all():  # a wide chart scrolls in its frame, by keyboard too
        expect(frame).to_have_attribute("tabindex", "0")
        assert frame.get_attribute("aria-label")
        assert frame.evaluate("f => f.getBoundingClientRect().right <= innerWidth + 0.5")


@pytest.mark.parametrize("path", PAGES.values(), ids=PAGES.keys())
def test_every_chart_writes_its_window(phone: tuple[Page, str], site_url: str, path: str) -> None:
    page, lang = phone
    page.goto(site_url + EDITIONS[lang] + path)
    charts = page.locator("svg.playbook-chart")
    assert charts.count() >= 1
    for chart in charts.all():
        expect(chart.locator("text.chart-window")).to_have_text(re.compile(r"^\S.+ – .+ UTC$"))


@pytest.mark.parametrize("lang", EDITIONS)
def test_the_card_chart_says_it_is_old_once_the_run_is_stalled(browser: Browser, site_url: str, lang: str) -> None:
    t = edition(lang) if EDITIONS[lang] else ENGLISH
    words = t.gettext("Out of date: this chart ends %(until)s, and the run has made no progress since.")
    for hours in (0, 39):  # the build's time, when the demo run makes progress; the reader
        context = browser.new_context(**SCREENS["phone-390"])
        page = context.new_page()
        page.clock.install(time=T + timedelta(hours=hours))
        page.goto(site_url + EDITIONS[lang] + "/")
        card = page.locator(".run-cards li", has=page.locator("svg.playbook-chart"))
        note = card.locator(".chart-old")
        if hours:  # the chart's last hour ends at the build's hour
            expect(note).to_be_visible()
            expect(note).to_have_text(words % {"until": dt(T, t=t)})
        else:
            expect(note).to_be_hidden()
        context.close()
