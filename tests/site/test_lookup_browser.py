"""The way in from an error line, and ladders and incidents linked both ways, in real headless
Chromium (issue 26 items 2 and 3): at 1280 and 390 px, in both editions, "Xid 79" typed into the
home page's labelled field leads to the crash ladder's Xid step and to the Xid 79 incident in at most
two actions (the typing, then one click); lookup.js itself finds every proven log line of the
catalogue as its mode; every ladder lists its past incidents, with date, fix and postmortem, and
every incident links its ladder step, each link landing on its heading; the search box, typed into,
ranks the incidents of a failure mode (filed as it, or showing it in their signatures: their
"failure mode" tags) above those that mention its words in passing ("fell off the bus" ranked INC-0012,
whose title says "fell back", above INC-0002, whose signatures say it), in both editions. axe-core
on the home page with the lookup's answers shown: tests/site/test_accessibility.py.
"""
from __future__ import annotations

from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from tabs import Tabs

from site_support import NOW
from test_accessibility import SCREENS
from test_failure_modes import EVIDENCE
from test_lookup_data import LISTING_CAUSES, NCCL_TRACE, TOLD_BY_NUMBER, recognised_via
from tooling.analysis import Analysis, load_analysis
from tooling.site.filters import dt
from tooling.site.i18n import ENGLISH, edition

EDITIONS = {"en": "", "ko": "/ko"}
XID_STEP = "/generated/ladders/crash/#step-3"  # Kernel log - Xid, OOM killer, segfaults
XID_INCIDENT = "/generated/incidents/INC-0011/"  # GPU fell off the bus (Xid 79) after Xid 64


@lru_cache(maxsize=1)
def _analysis(root: Path) -> Analysis:
    return load_analysis(root, now=datetime.fromisoformat(NOW).astimezone(timezone.utc))


@pytest.fixture
def analysis(built_site: Path) -> Analysis:
    """The analysis of the records the site was built from (the project's, and the test's own)."""
    return _analysis(built_site.parent)


@pytest.fixture(params=[(screen, lang) for screen in SCREENS for lang in EDITIONS], ids=lambda p: "-".join(p))
def reader(tabs: Tabs, request: pytest.FixtureRequest) -> tuple[Page, str]:
    screen, lang = request.param
    return tabs.tab(clock=NOW, **SCREENS[screen]), EDITIONS[lang]


def _path(page: Page) -> str:
    parts = urlsplit(page.url)
    return parts.path + (f"#{parts.fragment}" if parts.fragment else "")


def test_xid_79_typed_on_the_home_page_reaches_its_ladder_step_and_incident_in_two_actions(
        reader: tuple[Page, str], site_url: str) -> None:
    page, prefix = reader
    t = edition("ko") if prefix else ENGLISH
    label = t.gettext("From an error line to its ladder step: paste the line or type its words")
    for target in (XID_STEP, XID_INCIDENT):
        page.goto(site_url + prefix + "/")
        field = page.get_by_label(label)  # the field has its label
        field.press_sequentially("Xid 79")  # action 1: typing; the answer appears as it is typed
        answer = page.locator(".lookup-results > .lookup-answer").first
        expect(answer).to_have_attribute("data-mode", "gpu.fell-off-bus")
        expect(answer).to_contain_text(t.gettext("recognised from {code}").replace("{code}", "Xid 79"))
        answer.locator(f"a[href$='{target.rsplit('/generated/', 1)[1]}']").click()  # action 2
        assert _path(page) == prefix + target
        if target == XID_STEP:
            heading = page.locator("article h2#step-3")
            expect(heading).to_be_in_viewport()
            expect(heading).to_contain_text("Xid")
        else:
            expect(page.locator("article h1")).to_contain_text("INC-0011: GPU fell off the bus (Xid 79)")
    assert page.evaluate("document.documentElement.scrollWidth - innerWidth") <= 0


def test_the_lookup_works_from_the_keyboard_alone(page: Page, site_url: str) -> None:
    page.goto(site_url + "/")
    page.locator("#lookup-input").focus()
    page.keyboard.type("NCCL WARN Timeout at work 8812")
    page.keyboard.press("Enter")  # submitting keeps the page and its answers
    assert urlsplit(page.url).path == "/"
    expect(page.locator(".lookup-results > .lookup-answer").first).to_have_attribute(
        "data-mode", "nccl.collective-timeout")
    expect(page.locator(".lookup-status")).to_have_text("Failure modes for this text: 1.")
    page.keyboard.press("Tab")  # on to the button, then into the first answer's links
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.closest('.lookup-answer')?.getAttribute('data-mode')")
    assert focused == "nccl.collective-timeout"
    page.locator("#lookup-input").fill("nothing to see here")
    expect(page.locator(".lookup-results > *")).to_have_count(0)
    expect(page.locator(".lookup-status")).to_contain_text("No failure mode recognised")


def test_the_script_finds_every_proven_log_line_as_its_mode(page: Page, site_url: str) -> None:
    page.goto(site_url + "/")
    found = page.evaluate("lines => lines.map(line => playbookLookup(line)[0] || null)", [line for _, line in EVIDENCE])
    assert [(mode, line) for (mode, line), got in zip(EVIDENCE, found) if got != mode] == []


def test_the_script_reads_proven_lines_told_by_number_as_the_scan_does(page: Page, site_url: str) -> None:
    """Codes written by number (a CUDA error, a glog CHECK's value, a signal, NCCL's return trace), and
    lines that list the causes a failure might have: the script names what tests/test_lookup_data.py's
    steps name, held there to the Recogniser and the scan."""
    lines = [*TOLD_BY_NUMBER, *LISTING_CAUSES, *NCCL_TRACE.splitlines()]
    page.goto(site_url + "/")
    found = page.evaluate("lines => lines.map(line => playbookRecognised(line))", lines)
    expected = [list(named) if (named := recognised_via(line)) else None for line in lines]
    assert [(line, got) for line, got, want in zip(lines, found, expected) if got != want] == []
    assert any(named and named[1] for named in expected)  # some named by a code, not only by words


@pytest.mark.parametrize("lang", EDITIONS)
def test_every_ladder_lists_its_incidents_and_every_incident_links_its_ladder(
        page: Page, site_url: str, analysis: Analysis, lang: str) -> None:
    prefix, t = EDITIONS[lang], edition(lang)
    for ladder in analysis.ladders:
        page.goto(f"{site_url}{prefix}/generated/ladders/{ladder.id}/")
        expect(page.locator("article h2#past-incidents")).to_contain_text(t.gettext("Past incidents"))
        listed = page.locator("article h2#past-incidents + ul > li")
        past = analysis.links.past[ladder.id].incidents
        expect(listed).to_have_count(len(past))
        for item, incident in zip(listed.all(), past):
            link = item.locator(f"a[href$='incidents/{incident.view.id}/']")
            expect(link).to_have_count(1)
            expect(item).to_contain_text(dt(incident.view.detected, t=t))  # when, as the page says it
            expect(item).to_contain_text(incident.fix.rstrip("…")[:60] if incident.fix else t.gettext("no actions recorded yet"))
            for pm in incident.postmortems:
                expect(item.locator(f"a[href$='postmortems/{pm}/']")).to_have_count(1)
            if incident.step:
                expect(item.locator(f"a[href='#step-{incident.step}']")).to_have_count(1)
                under = page.locator(f"article h2#step-{incident.step} ~ ul li a[href$='incidents/{incident.view.id}/']")
                expect(under.first).to_be_attached()  # also under its step
    for view in analysis.incidents:
        place = analysis.links.places[view.id]
        page.goto(f"{site_url}{prefix}/generated/incidents/{view.id}/")
        anchor = f"#step-{place.step}" if place.step else ""
        link = page.locator(f"article .ladder-step a[href$='ladders/{place.ladder.id}/{anchor}']")
        expect(link).to_have_count(1)
        link.click()
        assert _path(page) == f"{prefix}/generated/ladders/{place.ladder.id}/{anchor}"
        expect(page.locator(f"article h2#{anchor[1:]}" if anchor else "article h1")).to_be_in_viewport()


@pytest.mark.parametrize("lang", EDITIONS)
@pytest.mark.parametrize(("query", "mode"), [
    ("fell off the bus", "gpu.fell-off-bus"),  # INC-0012 "fell back", INC-0013 "fell from 3,000" in passing
    ("Xid 79", "gpu.fell-off-bus"),  # INC-0009 "(ECC, Xid, df)", INC-0013 "no Xid"
    ("NCCL timeout", "nccl.collective-timeout"),
    ("HBM ECC", "gpu.hbm-ecc"),
])
def test_search_ranks_the_incidents_of_a_failure_above_those_that_mention_it(
        page: Page, site_url: str, analysis: Analysis, lang: str, query: str, mode: str) -> None:
    own = {v.id for v in analysis.incidents if (who := analysis.identities[v.id]).mode and who.mode.id == mode}
    seen = {v.id for v in analysis.incidents if any(m.id == mode for m in analysis.links.seen[v.id])}
    about = own | seen
    assert about, f"no incident of {mode} to rank"
    page.goto(site_url + EDITIONS[lang] + "/")
    page.locator(".md-search__input").click()  # the header's search field (a 1400-px window)
    page.locator(".md-search__input").press_sequentially(query)  # typed, as a reader does
    results = page.locator(".md-search-result__item > a")
    expect(results.first).to_be_visible()
    pages = [urlsplit(href).path for href in results.evaluate_all("links => links.map(a => a.href)")]
    order = [p.rstrip("/").rsplit("/", 1)[1] for p in dict.fromkeys(pages) if "/incidents/INC-" in p]
    assert order[0] in (own or seen), order  # the first incident shown is one filed as that failure
    assert set(order[:len(about)]) == about, order  # every incident of the failure before any other
