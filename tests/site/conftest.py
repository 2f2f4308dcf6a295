"""A built site served on localhost, and real headless Chromium to look at it."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from site_support import CHROMIUM, FLAGS, NOW, build_site, served
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


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    # the reader starts at the build time, so freshness.js keeps the build's text; install, not
    # set_fixed_time: a frozen clock stops the search from ever answering
    tab.clock.install(time=NOW)
    yield tab
    context.close()
