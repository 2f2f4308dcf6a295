"""Every page the site has, in both editions, not one of each type: in real Chromium it loads
with no console error, no uncaught exception, no failed request and no HTTP error (a stray
/versions.json, a missing asset or a search index asked for in the wrong place shows up here
first)."""
from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page

from tabs import watched


def _pages(site: Path) -> list[str]:
    """The URL path of every page mkdocs wrote (directory URLs), the 404 page left out."""
    paths = []
    for index in sorted(site.rglob("index.html")):
        relative = index.parent.relative_to(site).as_posix()
        paths.append("/" if relative == "." else f"/{relative}/")
    return paths


# One test per edition: each is minutes of page loads, and a parallel run (.ci/run) reads the two
# editions on two workers at once.
@pytest.mark.parametrize("edition", ["English", "Korean"])
def test_every_page_loads_without_an_error_or_a_failed_request(built_site: Path, page: Page,
                                                              site_url: str, edition: str) -> None:
    pages = _pages(built_site)
    korean = [path for path in pages if path.startswith("/ko/")]
    assert len(pages) - len(korean) >= 40, pages  # the bundled records make about fifty pages
    assert len(korean) == len(pages) // 2  # each of them in the Korean edition too
    pages = korean if edition == "Korean" else [path for path in pages if path not in korean]
    problems: list[str] = []
    current = {"path": ""}

    def note(what: str) -> None:
        problems.append(f"{current['path']}: {what}")

    with watched(page, note):
        for path in pages:
            current["path"] = path
            page.goto(site_url + path)
            page.wait_for_load_state("networkidle")
    assert problems == []
