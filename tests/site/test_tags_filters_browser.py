"""The tags page and the incident log's filters, in real headless Chromium (issue 26 item 7): the tags
page groups the tags by facet (run, layer, symptom, severity, status, failure mode) and lists each
tag's incidents by title, newest first, with their day, in both editions (the theme listed bare ids
oldest first); a value of the incident log's filters keeps only its rows in place, says how many,
and shows every row again on a second click or from the status line's button; without JavaScript it
leads to its tag's section of the tags page, which lists the same incidents.
"""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from site_support import NOW
from tooling.analysis import Analysis, load_analysis
from tooling.site.i18n import edition
from tooling.site.links import tag_id

EDITIONS = {"en": "", "ko": "/ko"}


@pytest.fixture(scope="module")
def analysis(built_site: Path) -> Analysis:
    return load_analysis(built_site.parent, now=datetime.fromisoformat(NOW).astimezone(timezone.utc))


def _tagged(analysis: Analysis) -> dict[str, list[str]]:
    """Each tag's incidents, newest first, from the records (the facets and the failure modes)."""
    found: dict[str, list[str]] = {}
    for view in sorted(analysis.incidents, key=lambda v: v.detected, reverse=True):
        modes = [m for m in (analysis.identities[view.id].mode, *analysis.links.seen[view.id]) if m is not None]
        names = [f"{facet}: {view.facet(facet)}" for facet in ("run", "layer", "symptom", "severity", "status")]
        for name in names + [f"failure mode: {m.title}" for m in modes]:
            found.setdefault(tag_id(name), []).append(view.id)
    return found


@pytest.mark.parametrize("lang", EDITIONS)
def test_the_tags_page_lists_each_tags_incidents_by_title_newest_first(
        page: Page, site_url: str, analysis: Analysis, lang: str) -> None:
    t = edition(lang)
    page.goto(f"{site_url}{EDITIONS[lang]}/generated/tags/")
    facets = page.locator("article h2[id^='facet-']").evaluate_all("hs => hs.map(h => h.firstChild.textContent)")
    assert facets == [t.gettext(f"By {w}") for w in ("run", "layer", "symptom", "severity", "status", "failure mode")]
    expected = _tagged(analysis)
    shown = {}
    for heading in page.locator("article h3[id^='tag:']").all():
        items = page.locator(f"[id='{heading.get_attribute('id')}'] + ul.tag-incidents > li")
        shown[heading.get_attribute("id")] = [urlsplit(a).path.rstrip("/").rsplit("/", 1)[1]
                                              for a in items.locator("a").evaluate_all("l => l.map(a => a.href)")]
        for item, incident_id in zip(items.all(), shown[heading.get_attribute("id")]):
            view = next(v for v in analysis.incidents if v.id == incident_id)
            day = view.detected.astimezone(timezone.utc).date().isoformat()
            expect(item).to_have_text(f"{day} · {incident_id}: {' '.join(str(view.data['title']).split())}")
    assert shown == expected
    # the tag of a failure mode is the page's own group, and the mode's incidents are under it
    assert shown[tag_id("failure mode: GPU fell off the bus")] == ["INC-0011", "INC-0002"]


@pytest.mark.parametrize("lang", EDITIONS)
def test_a_filter_of_the_incident_log_keeps_its_rows_in_place(
        page: Page, site_url: str, analysis: Analysis, lang: str) -> None:
    t = edition(lang)
    path = f"{EDITIONS[lang]}/generated/incidents/"
    page.goto(site_url + path)
    rows = page.locator("article .incident-log tbody tr")
    expect(rows).to_have_count(len(analysis.incidents))
    storage = sorted(v.id for v in analysis.incidents if v.data["layer"] == "storage")
    status = page.locator("[data-filter-status]")
    expect(status).to_be_hidden()
    value = page.locator(".log-filters a[href$='#tag:layer-storage']")
    value.click()
    assert urlsplit(page.url).path == path and not urlsplit(page.url).fragment  # filtered in place
    expect(page.locator("article .incident-log tbody tr:visible")).to_have_count(len(storage))
    ids = page.locator("article .incident-log tbody tr:visible td.id").all_inner_texts()
    assert sorted(i.strip() for i in ids) == storage
    expect(status).to_be_visible()
    said = t.gettext("Showing the %(count)s incidents tagged %(tag)s.") % {"count": len(storage), "tag": "storage"}
    expect(status).to_contain_text(said)
    expect(value).to_have_attribute("aria-current", "true")
    page.locator(".log-filters a[href$='#tag:symptom-hang']").click()  # another value replaces it
    hang = [v.id for v in analysis.incidents if v.data["symptom"] == "hang"]
    expect(page.locator("article .incident-log tbody tr:visible")).to_have_count(len(hang))
    expect(value).not_to_have_attribute("aria-current", "true")
    status.get_by_role("button", name=t.gettext("Show every incident")).click()
    expect(rows.locator("visible=true")).to_have_count(len(analysis.incidents))
    expect(status).to_be_hidden()


def test_without_javascript_a_filter_leads_to_its_tags_section(browser: Browser, site_url: str,
                                                              analysis: Analysis) -> None:
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.goto(site_url + "/generated/incidents/")
        page.locator(".log-filters a[href$='#tag:layer-storage']").click()
        assert urlsplit(page.url).path == "/generated/tags/" and urlsplit(page.url).fragment == "tag:layer-storage"
        listed = page.locator("[id='tag:layer-storage'] + ul.tag-incidents > li a")
        storage = [v.id for v in sorted(analysis.incidents, key=lambda v: v.detected, reverse=True)
                   if v.data["layer"] == "storage"]
        expect(listed).to_have_count(len(storage))
        for link, incident_id in zip(listed.all(), storage):
            expect(link).to_contain_text(f"{incident_id}: ")
    finally:
        context.close()
