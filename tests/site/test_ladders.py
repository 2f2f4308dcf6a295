"""The ladders as runbooks for 3 a.m., and the home page's 'Paged? Start here' box, in Chromium."""
from __future__ import annotations

import html
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml
from playwright.sync_api import Browser, Page, expect

from site_support import PROJECT

# mkdocs-material's copy button (content.code.copy), one in each code block's toolbar
COPY = "button.md-code__button[data-md-type='copy']"
LADDERS = {p.stem: yaml.safe_load(p.read_text()) for p in sorted((PROJECT / "runbooks" / "ladders").glob("*.yaml"))
           if "." not in p.stem}  # the English ladders, not their translations (crash.ko.yaml)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _heading(page: Page, number: int):
    return page.locator(f"article h2#step-{number}")


@pytest.mark.parametrize("ladder_id", sorted(LADDERS))
def test_every_command_is_a_code_block_with_a_copy_button(page: Page, site_url: str, ladder_id: str) -> None:
    ladder = LADDERS[ladder_id]
    page.goto(f"{site_url}/generated/ladders/{ladder_id}/")
    article = page.locator("article")
    commands = [step["command"] for step in ladder["steps"] if "command" in step]
    expect(article.locator(COPY)).to_have_count(len(commands) + 1)  # + the triage command
    shown = [text.rstrip("\n") for text in article.locator("div.highlight code").all_inner_texts()]
    assert shown == [f"tooling triage {ladder_id}", *commands]
    for number, step in enumerate(ladder["steps"], 1):  # each step's own text, in its own section
        heading = _heading(page, number)
        assert heading.evaluate("h => h.firstChild.textContent") == f"{number}. {step['name']}"
        follows = "xpath=following-sibling::p[starts-with(normalize-space(.), '{}')][1]"
        expect(heading.locator(follows.format("Expected output:"))).to_have_text(
            f"Expected output: {_flat(step['expect'])}")
        expect(heading.locator(follows.format("Next:"))).to_have_text(f"Next: {_flat(step['next'])}")


def test_a_printed_ladder_has_its_commands_and_no_copy_buttons(fresh_page: Page, site_url: str) -> None:
    """Issue 26: copy buttons printed on a printed ladder."""
    fresh_page.goto(f"{site_url}/generated/ladders/hang/")
    article = fresh_page.locator("article")
    expect(article.locator(COPY).first).to_be_visible()
    fresh_page.emulate_media(media="print")
    for button in article.locator(COPY).all():
        expect(button).to_be_hidden()
    expect(article.locator("div.highlight code").first).to_be_visible()


def test_the_copy_button_copies_the_command_exactly(browser: Browser, site_url: str) -> None:
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    try:
        page = context.new_page()
        page.goto(f"{site_url}/generated/ladders/crash/")
        step = 7
        block = _heading(page, step).locator("xpath=following-sibling::div[contains(@class, 'highlight')][1]")
        block.hover()
        block.locator(COPY).click()
        assert page.evaluate("navigator.clipboard.readText()") == LADDERS["crash"]["steps"][step - 1]["command"]
    finally:
        context.close()


@pytest.mark.parametrize("ladder_id", sorted(LADDERS))
def test_step_anchors_bring_their_step_into_view(page: Page, site_url: str, ladder_id: str) -> None:
    last = len(LADDERS[ladder_id]["steps"])
    url = f"{site_url}/generated/ladders/{ladder_id}/"
    page.goto(url)
    expect(_heading(page, last)).not_to_be_in_viewport()
    for number in (3, last):
        page.goto(f"{url}#step-{number}")
        heading = _heading(page, number)
        expect(heading).to_be_in_viewport()
        header = page.locator("header.md-header").bounding_box()
        assert heading.bounding_box()["y"] >= header["y"] + header["height"] - 1  # not under the sticky header


def test_a_ladder_keeps_its_order_when_a_heading_is_clicked(page: Page, site_url: str) -> None:
    page.goto(f"{site_url}/generated/ladders/hang/")
    names = [f"{n}. {s['name']}" for n, s in enumerate(LADDERS["hang"]["steps"], 1)]
    headings = page.locator("article h2[id^='step-']")
    _heading(page, 2).click()
    _heading(page, 5).click()
    assert [h.evaluate("h => h.firstChild.textContent") for h in headings.all()] == names
    assert page.locator("article table", has_text="GPU memory errors").count() == 0
    expect(page.locator("article ol").first.locator("a")).to_have_text(
        [s["name"] for s in LADDERS["hang"]["steps"]])


def _expected_box(root: Path) -> list[tuple[str, str | None, list[str]]]:
    """(symptom, ladder id, latest three incident ids) from the records, in the box's order."""
    incidents = [yaml.safe_load(p.read_text()) for p in (root / "incidents").glob("INC-*.yaml")]
    counts = Counter(i["symptom"] for i in incidents)
    served = {s: lid for lid, ladder in sorted(LADDERS.items(), reverse=True)
              for s in ladder.get("also_for", [])}
    served |= {ladder["symptom"]: lid for lid, ladder in LADDERS.items()}
    newest = sorted(incidents, key=lambda i: (i["detected_at"], i["id"]), reverse=True)
    return [(s, served.get(s), [i["id"] for i in newest if i["symptom"] == s][:3])
            for s in sorted(set(served) | set(counts), key=lambda s: (-counts[s], s))]


def test_home_opens_with_the_paged_box(page: Page, site_url: str, built_site: Path) -> None:
    page.goto(site_url + "/")
    box = page.locator("article h1 + .status-strip + details")  # under the status strip, collapsed
    expect(box).to_have_class(re.compile(r"\bpaged\b"))
    expect(box.locator("summary")).to_have_text("Paged? Start here")
    box.locator("summary").click()
    rows = box.locator("li")
    expected = _expected_box(built_site.parent)
    expect(rows).to_have_count(len(expected))
    for row, (symptom, ladder_id, recent) in zip(rows.all(), expected):
        expect(row.locator("strong")).to_have_text(symptom)
        links = row.locator("a")
        assert links.first.get_attribute("href") == f"generated/ladders/{ladder_id}/"
        assert [a.inner_text() for a in links.all()[1:]] == recent
        expect(row.locator("code")).to_have_text(f"tooling triage {ladder_id}")
    expect(rows.filter(has=page.locator("strong", has_text="slowdown"))).to_have_text(
        "slowdown (throughput dropped): Training slowed down - throughput dropped, no error, tooling triage "
        "slowdown. Latest: INC-0013 Throughput fell from 3,000 to 2,350 tokens/s/GPU; node117 HCA... "
        "(2026-11-24 05:40 UTC).")
    expect(rows.filter(has=page.locator("strong", has_text="infra"))).to_contain_text(
        "infra (cluster or storage trouble seen directly): walk Training crashed - the processes died")


def test_the_paged_box_links_work(page: Page, site_url: str) -> None:
    page.goto(site_url + "/")
    page.locator("article details.paged summary").click()  # its one line opens the list
    links = page.locator("article details.paged li a")
    titles = {f"generated/ladders/{lid}/": ladder["title"] for lid, ladder in LADDERS.items()}
    for href, text in [(a.get_attribute("href"), a.inner_text()) for a in links.all()]:
        response = page.request.get(f"{site_url}/{href}")
        assert response.ok, href
        heading = html.unescape(re.search(r"<h1[^>]*>(.*?)</h1>", response.text(), re.DOTALL).group(1))
        assert heading.startswith(titles.get(href, f"{text}: ")), (href, heading)
    first = links.first.get_attribute("href")
    links.first.click()
    expect(page).to_have_url(f"{site_url}/{first}")
    assert page.locator("article h1").evaluate("h => h.firstChild.textContent") == titles[first]
