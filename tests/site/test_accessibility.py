"""Every page type, in both palettes and both editions, on a 1280-px desktop and a 390-px phone
(touch, no hover), in real Chromium: axe-core finds no serious or critical violation, the console
shows no error, no request fails and nothing is wider than the screen.

axe-core is vendored from npm (tests/site/vendor/axe-core/, see its README.txt) and injected
into each page, so the check runs offline.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page

from tabs import Tabs, watched

AXE = Path(__file__).with_name("vendor") / "axe-core" / "axe.min.js"

# One page of each type the site has (the run page, ladders and labs included).
PAGES = {
    "home": "/",
    "playbook page": "/playbook/checkpoint-cadence/",
    "severity page": "/playbook/incident-response/",
    "records guide": "/records/",
    "run": "/generated/runs/demo-7b/",
    "incident log": "/generated/incidents/",
    "incident": "/generated/incidents/INC-0004/",
    "hostile incident": "/generated/incidents/INC-0900/",
    "postmortems": "/generated/postmortems/",
    "postmortem": "/generated/postmortems/PM-0001/",
    "action board": "/generated/postmortems/action-items/",
    "trends": "/generated/trends/",
    "stack": "/generated/stack/",
    "repeats": "/generated/repeats/",
    "failure modes": "/generated/failure-modes/",
    "ladders": "/generated/ladders/",
    "ladder": "/generated/ladders/hang/",
    "field reference": "/generated/reference/",
    "tags": "/generated/tags/",
    "lab": "/generated/labs/03-nan-guard/",
}
PAGES |= {f"{kind} (ko)": "/ko" + path for kind, path in PAGES.items()}  # and in the Korean edition
PALETTES = {"light": "default", "dark": "slate"}  # the OS setting -> the palette it selects

RUN_AXE = """async () => {
    const result = await axe.run(document, {resultTypes: ['violations']});
    return result.violations
        .filter(v => v.impact === 'serious' || v.impact === 'critical')
        .map(v => `${v.impact} ${v.id}: ${v.nodes.length} node(s), first ${v.nodes[0].target.join(' ')}: `
                  + v.nodes[0].failureSummary.replace(/\\s+/g, ' '));
}"""


# A desktop, and a phone: mkdocs-material changes behaviour without hover (code blocks), not only
# layout, so the phone is emulated as one (touch, no hover), not only as a narrow window.
SCREENS = {"1280": {"viewport": {"width": 1280, "height": 800}},
           "phone-390": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
                         "device_scale_factor": 3}}


@pytest.fixture(params=[(palette, screen) for screen in SCREENS for palette in PALETTES],
                ids=lambda param: f"{param[1]}-{param[0]}")
def palette_page(tabs: Tabs, request: pytest.FixtureRequest) -> tuple[str, Page]:
    """A tab on a desktop or a phone whose OS setting asks for the light or the dark palette."""
    palette, screen = request.param
    return palette, tabs.tab(color_scheme=palette, **SCREENS[screen])


@pytest.mark.parametrize("kind", list(PAGES))
def test_page_loads_cleanly_and_axe_finds_nothing_serious(palette_page: tuple[str, Page], site_url: str,
                                                          kind: str) -> None:
    scheme, page = palette_page
    problems: list[str] = []
    with watched(page, problems.append):
        page.goto(site_url + PAGES[kind])
        page.wait_for_load_state("networkidle")
    assert page.locator("body").get_attribute("data-md-color-scheme") == PALETTES[scheme]
    assert problems == []
    assert page.evaluate("document.documentElement.scrollWidth - innerWidth") <= 0, "wider than the screen"
    page.add_script_tag(path=str(AXE))
    assert page.evaluate(RUN_AXE) == []


@pytest.mark.parametrize("path", ["/", "/ko/"])
def test_the_home_pages_lookup_with_its_answers_shown_is_clean(palette_page: tuple[str, Page], site_url: str,
                                                              path: str) -> None:
    """The home page again, once the lookup shows answers (issue 26 item 2): a dmesg line pasted
    into its labelled field, every answer it shows in the theme's colours, nothing wider than the
    screen, axe-core clean."""
    scheme, page = palette_page
    page.goto(site_url + path)
    page.locator("#lookup-input").fill("NVRM: Xid (PCI:0000:ca:00): 79, pid=3310975, name=python, "
                                       "GPU has fallen off the bus. CUDA error: uncorrectable ECC error encountered")
    assert page.locator(".lookup-results > .lookup-answer").count() >= 2
    assert page.locator("body").get_attribute("data-md-color-scheme") == PALETTES[scheme]
    assert page.evaluate("document.documentElement.scrollWidth - innerWidth") <= 0, "wider than the screen"
    page.add_script_tag(path=str(AXE))
    assert page.evaluate(RUN_AXE) == []
