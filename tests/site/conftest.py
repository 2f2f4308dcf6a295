"""A built site served on localhost, and real headless Chromium to look at it."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from site_support import CHROMIUM, FLAGS, NOW, build_site, served
from tabs import Tabs
from workers import made_once


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site (HTML) of a copy of this project, with the test records added: built once
    for a run, whatever its number of workers (tests/workers.py), as the tests only read it."""
    return made_once(tmp_path_factory, "site-repo", build_site)


@pytest.fixture(scope="session")
def site_url(built_site: Path) -> Iterator[str]:
    with served(built_site) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def tabs(browser: Browser) -> Iterator[Tabs]:
    """Kept tabs, one per kind of screen, for the tests that only look at a page (tests/site/tabs.py)."""
    kept = Tabs(browser)
    yield kept
    kept.close()


@pytest.fixture
def page(tabs: Tabs) -> Page:
    """A kept 1400x1000 tab (tests/site/tabs.py) whose clock starts at the build time for this test:
    the reader starts then, so freshness.js keeps the build's text. install, not set_fixed_time: a
    frozen clock stops the search from ever answering."""
    return tabs.tab(clock=NOW, viewport={"width": 1400, "height": 1000})


@pytest.fixture
def fresh_page(browser: Browser) -> Iterator[Page]:
    """``page``'s tab, but new and closed after the test: for a test that changes more than the
    page it shows (listeners of its own, the media, a CDP session)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    tab.clock.install(time=NOW)
    yield tab
    context.close()
