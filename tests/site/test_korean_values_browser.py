"""Record values in the Korean edition, in real headless Chromium (issue 26 item 7): an incident's
status and severity, a postmortem's and an action item's status and a run's state show in Korean with
the record's value beside them ('해결됨 (resolved)', '진행 중 (in-progress)', '심각도 2 (sev2)') on
the incident page, the incident log, the action board, the postmortem pages, the run page and its
card; the English edition shows the value as written. One vocabulary: tooling.site.words.VALUES.
"""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from site_support import NOW
from tooling.analysis import Analysis, load_analysis
from tooling.site.i18n import edition
from tooling.site.words import VALUES

KO = edition("ko")


@pytest.fixture(scope="module")
def analysis(built_site: Path) -> Analysis:
    return load_analysis(built_site.parent, now=datetime.fromisoformat(NOW).astimezone(timezone.utc))


def korean(value: str) -> str:
    """A value as the Korean edition says it: its word, the value beside it."""
    assert value in VALUES, f"{value!r} has no words"
    word = KO.gettext(VALUES[value])
    assert word != VALUES[value], f"the Korean catalogue does not translate {VALUES[value]!r}"
    return f"{word} ({value})"


def _cell(page: Page, label: str) -> Locator:
    """The value cell of a Field | Value table's row ``label``."""
    return page.locator("article table tr", has=page.locator(f"td:text-is('{label}')")).locator("td").nth(1)


def test_an_incident_page_says_its_status_and_severity_in_korean(page: Page, site_url: str,
                                                                 analysis: Analysis) -> None:
    for view in analysis.incidents:
        status, severity = str(view.data["status"]), str(view.data["severity"])
        page.goto(f"{site_url}/ko/generated/incidents/{view.id}/")
        expect(_cell(page, KO.gettext("Status"))).to_have_text(korean(status))
        expect(_cell(page, KO.gettext("Status")).get_by_role("link")).to_have_text(korean(status).split(" (")[0])
        expect(_cell(page, KO.gettext("Severity"))).to_have_text(korean(severity))
        page.goto(f"{site_url}/generated/incidents/{view.id}/")
        expect(_cell(page, "Status")).to_have_text(status)
        expect(_cell(page, "Severity")).to_have_text(severity)


def test_the_incident_log_and_the_action_board_say_their_values_in_korean(page: Page, site_url: str,
                                                                          analysis: Analysis) -> None:
    page.goto(f"{site_url}/ko/generated/incidents/")
    rows = page.locator("article .incident-log tbody tr")
    expect(rows).to_have_count(len(analysis.incidents))
    shown = {r.locator("td.id").inner_text().strip(): (r.locator(f"td[data-label='{KO.gettext('Status')}']").inner_text(),
                                                        r.locator(f"td[data-label='{KO.gettext('Severity')}']").inner_text())
             for r in rows.all()}
    assert shown == {v.id: (korean(str(v.data["status"])), korean(str(v.data["severity"]))) for v in analysis.incidents}
    page.goto(f"{site_url}/ko/generated/postmortems/action-items/")
    statuses = page.locator(f"article .action-board tbody td[data-label='{KO.gettext('Status')}']").all_inner_texts()
    assert statuses == [korean(str(row.item["status"])) for row in analysis.actions]
    assert korean("in-progress") in statuses  # the example


def test_postmortem_and_run_pages_say_their_values_in_korean(page: Page, site_url: str, analysis: Analysis) -> None:
    for view in analysis.postmortems:
        page.goto(f"{site_url}/ko/generated/postmortems/{view.id}/")
        expect(_cell(page, KO.gettext("Status"))).to_contain_text(korean(str(view.data["status"])))
    page.goto(f"{site_url}/ko/generated/postmortems/")
    expect(page.locator("article table tbody tr", has_text="PM-0002")).to_contain_text(korean("in-review"))
    for card in analysis.runs:
        page.goto(f"{site_url}/ko/generated/runs/{card.id}/")
        expect(_cell(page, KO.gettext("State"))).to_have_text(korean(str(card.data["state"])))
    page.goto(f"{site_url}/ko/")
    expect(page.locator("article")).to_contain_text(korean("degraded"))  # the run's card (the strip says 성능 저하 alone)
