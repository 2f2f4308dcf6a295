"""The failure-mode page's log lines, in real headless Chromium (issue 26 item 7): each mode's "Log
lines" are the public verbatim lines of its examples (tooling/catalogue/examples.yaml), each with its
source, and no regular expression; the recognisers and keywords sit in a collapsed "Patterns" block
under the mode's table, shown on a click. Both editions.
"""
from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tooling.catalogue.examples import examples_of
from tooling.catalogue.modes import catalogue
from tooling.site.i18n import edition

EDITIONS = {"en": "", "ko": "/ko"}


@pytest.mark.parametrize("lang", EDITIONS)
def test_log_lines_are_real_lines_and_the_patterns_are_folded(page: Page, site_url: str, lang: str) -> None:
    t = edition(lang)
    page.goto(f"{site_url}{EDITIONS[lang]}/generated/failure-modes/")
    checked = 0
    for mode in catalogue().modes:
        anchor = mode.id.replace(".", "-")
        table = page.locator(f"xpath=//article//h2[@id='{anchor}']/following::table[1]")
        row = table.locator("tr", has=page.locator(f"td:text-is('{t.gettext('Log lines')}')"))
        found = examples_of(mode.id)
        if not found:
            expect(row).to_have_count(0)
            continue
        shown = [" ".join(c.split()) for c in row.locator("td").nth(1).locator("code").all_text_contents()]
        assert shown == [" ".join(e.line.split()) for e in found], mode.id  # a run of spaces shows as one
        sources = row.locator("td").nth(1).get_by_role("link", name=t.gettext("source"))
        assert sources.evaluate_all("links => links.map(a => a.href)") == [e.source for e in found]
        assert not set(shown) & set(mode.recognisers) - {e.line for e in found}  # no expression shown as a line
        patterns = page.locator(f"xpath=//article//h2[@id='{anchor}']/following::details[1]")
        expect(patterns.locator("summary")).to_have_text(t.gettext("Patterns"))
        assert patterns.get_attribute("open") is None  # collapsed
        first = patterns.locator("code").first
        expect(first).to_have_text((mode.recognisers or mode.keywords)[0])
        expect(first).to_be_hidden()
        checked += 1
    assert checked >= 70
    # a click opens one
    patterns = page.locator("xpath=//article//h2[@id='gpu-fell-off-bus']/following::details[1]")
    patterns.locator("summary").click()
    expect(patterns.locator("code", has_text="NVRM.{0,200}status[ =]0x0000000f\\b")).to_be_visible()
    row = page.locator("xpath=//article//h2[@id='gpu-fell-off-bus']/following::table[1]").locator(
        "tr", has=page.locator(f"td:text-is('{t.gettext('Log lines')}')"))
    expect(row).to_contain_text("NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus")
    expect(row).not_to_contain_text("0x0000000f\\b")
