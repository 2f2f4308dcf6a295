"""The status strip, the first-response block and the severity links, in real headless Chromium
(issue 26 items 1, 4 and 6): on the first screen of the home and run pages at 1280 and 390 px, in
both palettes and both editions; "stalled" at a reader's clock 39 hours after the build; a copy
button on every first-response command; every severity link landing on its definition.

The site is built once at T (site_support.NOW) and never rebuilt: a state or an age that changes
is freshness.js working it out again with the reader's (Playwright's) clock.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from urllib.parse import urljoin, urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from tabs import Tabs

from site_support import NOW
from test_accessibility import PALETTES, SCREENS
from tooling.site.filters import elapsed
from tooling.site.i18n import ENGLISH, edition
from tooling.site.words import VALUES

T = datetime.fromisoformat(NOW)
DEMO_BEAT = datetime.fromisoformat("2026-11-29T11:56:00+00:00")  # runbooks/runs/demo-7b.yaml
DEMO_CHECKPOINT = datetime.fromisoformat("2026-11-29T08:06:00+00:00")
EDITIONS = {"en": "", "ko": "/ko"}
PAGES = {"home": "/", "run": "/generated/runs/demo-7b/"}
# What the demo's first-response block hands out, in its order (runbooks/runs/demo-7b.yaml).
COMMANDS = ["touch /nfs/ckpt/demo-7b/STOP", "touch /nfs/ckpt/demo-7b/SAVE",
            "scontrol update nodename=NODE state=drain reason='demo-7b: REASON'",
            "tooling triage SYMPTOM --incident demo-7b"]


@pytest.fixture(params=[(screen, palette, lang) for screen in SCREENS for palette in PALETTES for lang in EDITIONS],
                ids=lambda p: "-".join(p))
def reader(tabs: Tabs, request: pytest.FixtureRequest) -> tuple[Page, str, str]:
    """A kept tab on a desktop or a phone in the light or dark palette, its clock at the build's
    time, with the edition's path prefix."""
    screen, palette, lang = request.param
    return tabs.tab(clock=NOW, color_scheme=palette, **SCREENS[screen]), PALETTES[palette], EDITIONS[lang]


def test_the_strip_opens_the_home_and_run_pages_within_the_first_screen(reader: tuple[Page, str, str],
                                                                        site_url: str) -> None:
    page, scheme, prefix = reader
    t = edition("ko") if prefix else ENGLISH
    for kind, path in PAGES.items():
        page.goto(site_url + prefix + path)
        expect(page.locator("body")).to_have_attribute("data-md-color-scheme", scheme)
        strip = page.locator("article h1 + .status-strip")  # the first thing under the title
        lines = strip.locator("li")
        expect(lines).to_have_count(2 if kind == "home" else 1)  # the demo and the stale run; the page's run
        demo = lines.first
        expect(demo.locator("[data-run-state]")).to_have_text(t.gettext("degraded"))
        for line in lines.all():
            box = line.bounding_box()
            assert box is not None and box["y"] + box["height"] <= page.viewport_size["height"], (kind, box)
        assert page.evaluate("document.documentElement.scrollWidth - innerWidth") <= 0, "wider than the screen"
        # on the home page the symptom picker follows, shrunk to its one line until opened
        if kind == "home":
            picker = page.locator("article .status-strip + details.paged")
            expect(picker).not_to_have_attribute("open", "")
            assert picker.bounding_box()["height"] < 60


@pytest.mark.parametrize("lang", EDITIONS)
def test_39_hours_after_the_build_the_strip_says_stalled(browser: Browser, site_url: str, lang: str) -> None:
    t = edition("ko") if lang == "ko" else ENGLISH
    later = T + timedelta(hours=39)
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.clock.install(time=later)
    for kind, path in PAGES.items():
        page.goto(site_url + EDITIONS[lang] + path)
        demo = page.locator(".status-strip li").first
        expect(demo.locator("[data-run-state]")).to_have_text(t.gettext("stalled"))
        expect(demo.locator("[data-run-state]")).to_have_attribute("data-run-state", "stalled")
        expect(demo.locator("[data-heartbeat-age]")).to_have_text(elapsed(later - DEMO_BEAT, t=t))
        expect(demo.locator("[data-age-since]")).to_have_text(elapsed(later - DEMO_CHECKPOINT, t=t))
        if kind == "home":  # the stale run has no heartbeat: nothing says it stalled
            expect(page.locator(".status-strip li").nth(1).locator("[data-run-state]")).to_have_text(
                t.gettext("running"))
    context.close()


def test_every_first_response_command_has_a_copy_button(page: Page, site_url: str) -> None:
    page.goto(site_url + "/generated/runs/demo-7b/")
    blocks = page.locator("h2#first-response ~ div.highlight:not(h2#the-run ~ *)")
    expect(blocks.locator("code")).to_have_text(COMMANDS)
    for block in blocks.all():
        button = block.locator("button[data-md-type=copy]")  # mkdocs-material's copy button
        expect(button).to_be_visible()
        target = button.get_attribute("data-clipboard-target")
        assert page.locator(target).inner_text().strip() in COMMANDS
    page.goto(site_url + "/")
    card = page.locator(".run-cards > ul > li").first
    response = card.locator("details")
    response.locator("summary").click()
    expect(response.locator("div.highlight code")).to_have_text(COMMANDS)
    expect(response.locator("div.highlight button[data-md-type=copy]")).to_have_count(len(COMMANDS))
    expect(response.locator("ol > li")).to_have_count(5)  # the first five minutes, as the playbook page lists them


@pytest.mark.parametrize("lang", EDITIONS)
def test_every_severity_link_lands_on_its_definition(page: Page, site_url: str, lang: str) -> None:
    checked = set()
    for path in ("/", "/generated/runs/demo-7b/", "/generated/incidents/", "/generated/incidents/INC-0013/"):
        page.goto(site_url + EDITIONS[lang] + path)
        links = page.locator("article a[href*='incident-response/#sev']")
        assert links.count() > 0, path
        for link in links.all():
            href = urljoin(page.url, link.get_attribute("href"))
            fragment = urlsplit(href).fragment
            # the severity as written; the Korean edition's words, with the value beside the link
            said = edition("ko").gettext(VALUES[fragment]) if lang == "ko" else fragment
            assert link.inner_text() == said, href
            if lang == "ko":
                assert link.evaluate("a => a.nextSibling.textContent + a.nextElementSibling.textContent") == f" ({fragment}", href
            checked.add(href)
    assert len(checked) >= 3
    for href in sorted(checked):
        page.goto(href)
        heading = page.locator(f"article h3#{urlsplit(href).fragment}")
        assert heading.evaluate("h => h.firstChild.textContent").strip() == urlsplit(href).fragment
        expect(heading.locator("xpath=following-sibling::ul[1]")).to_contain_text(
            (edition("ko") if lang == "ko" else ENGLISH).gettext("Who is woken:"))
