"""The built site as a reader sees it, in real headless Chromium."""
from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from site_support import XSS_TITLE


def search(page: Page, text: str) -> None:
    """Type into Material's search box, as a reader does after pressing 's'."""
    box = page.locator("input[data-md-component=search-query]")
    box.click()
    box.press_sequentially(text)
    # Hangul arrives as inserted text, without the keyup the theme reads the box on (an IME sends
    # one); a key the box ignores gives it one.
    box.press("End")


def test_home_lists_the_run_with_its_state_and_on_call(page: Page, site_url: str) -> None:
    page.goto(site_url + "/")
    cards = page.locator(".run-cards")
    expect(cards).to_contain_text("Demo 7B pretraining, 3T tokens on atlas")
    expect(cards).to_contain_text("degraded")
    expect(cards).to_contain_text("On call now: Diego Alvarez until 2026-11-29 20:00 UTC")
    expect(cards).to_contain_text("next: Mina Park from 2026-11-29 20:00 UTC")
    expect(cards).to_contain_text("Last good checkpoint: step 609,500")


def test_search_finds_an_incident_by_its_error_signature(page: Page, site_url: str) -> None:
    page.goto(site_url + "/")
    search(page, "Xid 79")
    results = page.locator(".md-search-result__item")
    expect(results.first).to_be_visible(timeout=15_000)
    expect(page.locator(".md-search-result")).to_contain_text(re.compile(r"INC-00(02|11)"))


def test_stale_banner_appears_only_for_the_stale_run(page: Page, site_url: str) -> None:
    page.goto(site_url + "/")
    banners = page.locator(".admonition.stale")
    expect(banners).to_have_count(1)
    expect(banners).to_contain_text("Stale 13B finetune: this page is 220 hours old")
    page.goto(site_url + "/generated/runs/stale-13b/")
    expect(page.locator(".admonition.stale")).to_contain_text("Stale: not updated for 220 hours")
    page.goto(site_url + "/generated/runs/demo-7b/")
    expect(page.locator(".admonition.stale")).to_have_count(0)


def test_from_an_incident_to_its_postmortem(page: Page, site_url: str) -> None:
    page.goto(site_url + "/generated/incidents/")
    page.locator("article").get_by_role("link", name="INC-0004", exact=True).click()
    expect(page.locator("h1")).to_contain_text("INC-0004")
    page.locator("article").get_by_role("link", name="Postmortem PM-0001").first.click()
    expect(page).to_have_url(re.compile(r"/generated/postmortems/PM-0001/$"))
    expect(page.locator("h1")).to_contain_text("PM-0001")
    expect(page.locator("article")).to_contain_text("INC-0004")


def test_hostile_record_text_runs_nothing_and_shows_literally(fresh_page: Page, site_url: str) -> None:
    dialogs: list[str] = []
    fresh_page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    for path in ("/", "/generated/incidents/", "/generated/incidents/INC-0900/", "/generated/runs/stale-13b/",
                 "/generated/tags/", "/generated/trends/"):
        fresh_page.goto(site_url + path)
        fresh_page.wait_for_load_state("load")
        article = fresh_page.locator("article")
        assert article.locator("img[src='x'], img[src='y'], iframe, svg[onload]").count() == 0
        assert article.locator("a[href^='javascript:' i]").count() == 0
        # the one script element of an article is the home page lookup's data, which never runs
        # (type application/json; tooling.site.lookup escapes <, > and & in it)
        assert article.locator("script:not([type='application/json'].lookup-data)").count() == 0
    fresh_page.goto(site_url + "/generated/incidents/INC-0900/")
    expect(fresh_page.locator("h1")).to_contain_text(f"INC-0900: {XSS_TITLE}")
    article = fresh_page.locator("article")
    expect(article).to_contain_text("<script>alert('timeline')</script> [x](javascript:alert(4)) <b>bold?</b>")
    expect(article).to_contain_text("[link](javascript:alert(5)) and <iframe src=javascript:alert(6)></iframe>")
    expect(article).to_contain_text("<svg onload=alert(3)>")
    expect(article.get_by_role("link", name="<img src=y onerror=alert(7)>")).to_have_attribute(
        "href", "https://logs.example.org/run?a=1&b=%3C2%3E")
    assert article.locator("b").count() == 0
    expect(fresh_page).to_have_title(re.compile(re.escape(XSS_TITLE)))
    search(fresh_page, "node666")
    expect(fresh_page.locator(".md-search-result__item").first).to_contain_text("node666", timeout=15_000)
    assert fresh_page.locator(".md-search-result img, .md-search-result script").count() == 0
    fresh_page.wait_for_timeout(500)
    assert dialogs == []


def test_the_site_makes_no_request_off_this_machine(fresh_page: Page, site_url: str) -> None:
    requests: list[str] = []
    fresh_page.on("request", lambda request: requests.append(request.url))
    for path in ("/", "/generated/incidents/", "/generated/incidents/INC-0004/", "/generated/trends/",
                 "/generated/postmortems/action-items/", "/generated/reference/"):
        fresh_page.goto(site_url + path)
        fresh_page.wait_for_load_state("networkidle")
    fresh_page.goto(site_url + "/")
    search(fresh_page, "NCCL")
    expect(fresh_page.locator(".md-search-result__item").first).to_be_visible(timeout=15_000)
    offsite = [url for url in requests if not url.startswith((site_url, "data:", "blob:"))]
    assert offsite == []
    assert any(url.endswith("tablesort.min.js") for url in requests)


def test_incident_log_sorts_by_a_clicked_column(page: Page, site_url: str) -> None:
    page.goto(site_url + "/generated/incidents/")
    table = page.locator("article table").first
    header = table.locator("th", has_text="GPU-h lost")
    header.click()
    header.click()  # tablesort sorts descending first on some columns; two clicks give both orders
    cells = table.locator("tbody tr td:nth-child(9)")
    values = [float(text.replace(",", "")) for text in cells.all_inner_texts()]
    assert values in (sorted(values), sorted(values, reverse=True)) and len(set(values)) > 2
    header.click()
    flipped = [float(text.replace(",", "")) for text in cells.all_inner_texts()]
    assert flipped == list(reversed(values))


def test_trends_page_draws_its_charts_with_numbers_beside_them(page: Page, site_url: str) -> None:
    page.goto(site_url + "/generated/trends/")
    charts = page.locator("svg.playbook-chart")
    expect(charts).to_have_count(4)
    assert charts.first.bounding_box()["height"] > 100
    expect(page.locator("article")).to_contain_text("Mean time to resolve")
    expect(page.locator("article table").nth(1)).to_contain_text("all layers")


def test_action_board_flags_overdue_and_unowned_items(page: Page, site_url: str) -> None:
    page.goto(site_url + "/generated/postmortems/action-items/")
    expect(page.locator(".admonition.action-alert")).to_contain_text("1 overdue, 1 without an owner")
    rows = page.locator("article table tbody tr")
    expect(rows.nth(0)).to_contain_text("Drain nodes on Xid 79 automatically")
    expect(rows.nth(0)).to_contain_text("overdue")
    expect(rows.nth(1)).to_contain_text("unowned")
    page.locator("article").get_by_role("link", name="PM-0900").first.click()
    expect(page.locator("h1")).to_contain_text("PM-0900")
    expect(page.locator("article table", has_text="Owner")).to_contain_text("unowned")


def test_nan_guard_lab_page_shows_its_chart(page: Page, site_url: str) -> None:
    page.goto(site_url + "/generated/labs/03-nan-guard/")
    expect(page.locator("h1")).to_contain_text("Lab 3")
    chart = page.locator("article img[alt^='Grad norm and loss']")
    expect(chart).to_be_visible()
    assert page.evaluate("img => img.naturalWidth", chart.element_handle()) > 100
