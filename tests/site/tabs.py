"""One tab per kind of screen, led from page to page by the tests that only look at a page, and
what goes wrong while a page loads in it.

A new browser context costs Chromium about twice the CPU of the page it then shows: a renderer
process is started and the theme's scripts, styles and fonts are fetched and compiled again
(measured 2.1 against 1.0 CPU-s a page, 2026-12-07, on this 2-core machine), and the suite's rest
tier is bound by CPU. A kept tab shows each page as a reader who follows a link sees it: a new
document with new scripts and their state, over a warm HTTP cache. Its storage is emptied before
each test hands it out, and each test watches only its own page loads; its clock, where it has one, starts again at the same
time. A test that changes more than the page it shows (listeners of its own, the media, a CDP
session) takes a tab of its own instead.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

from playwright.sync_api import Browser, Error, Page, Request

EMPTY_STORAGE = "() => { localStorage.clear(); sessionStorage.clear(); }"


class Tabs:
    """A tab for each set of context options (screen, palette, ...), made on first use."""

    def __init__(self, browser: Browser) -> None:
        self._browser = browser
        self._tabs: dict[str, Page] = {}

    def tab(self, *, clock: str | None = None, **options: Any) -> Page:
        """The kept tab for ``options`` (those of ``Browser.new_context``), its storage emptied and
        its clock (if ``clock`` is given) at ``clock`` and running on from there."""
        key = repr((clock is None, sorted(options.items())))
        page = self._tabs.get(key)
        if page is not None and not self._reset(page, clock):
            page.context.close()
            page = None
        if page is None:
            page = self._tabs[key] = self._browser.new_context(**options).new_page()
            if clock is not None:
                page.clock.install(time=clock)
        return page

    @staticmethod
    def _reset(page: Page, clock: str | None) -> bool:
        """Whether ``page`` could be made as a new tab would be (one a failed test crashed cannot)."""
        try:
            if page.url.startswith("http"):  # the theme keeps choices (palette, tabs) in storage
                page.evaluate(EMPTY_STORAGE)
            if clock is not None:
                page.clock.set_system_time(clock)
        except Error:
            return False
        return True

    def close(self) -> None:
        for page in self._tabs.values():
            page.context.close()  # closing a context closed before does nothing


def left_behind(url: str, failure: str | None) -> bool:
    """The browser's own request for the favicon, which it starts after the page has loaded and
    aborts when the next page is opened (seen on a busy machine): not a request of the page's.
    Its answer (a 404 or not) is still checked by the response handler."""
    return url.endswith("favicon.png") and failure == "net::ERR_ABORTED"


@contextmanager
def watched(page: Page, note: Callable[[str], None]) -> Iterator[None]:
    """``note(what)`` for each console error, uncaught exception, failed request and HTTP error of
    ``page`` while the block runs, and none after it (a kept tab serves the next test too). A
    request the page started before the block is not the block's: leaving its page aborts it (a
    Hangul face the last test's axe-core run asked for, seen on a busy machine)."""
    started: set[Request] = set()
    handlers: dict[str, Callable[[Any], None]] = {
        "request": lambda r: started.add(r),  # a lambda: the client marks each handler it wraps
        "console": lambda m: note(f"console {m.type}: {m.text}") if m.type == "error" else None,
        "pageerror": lambda error: note(f"uncaught: {error}"),
        "requestfailed": lambda r: None if r not in started or left_behind(r.url, r.failure) else
        note(f"failed request: {r.url} ({r.failure})"),
        "response": lambda r: note(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None,
    }
    for event, handler in handlers.items():
        page.on(event, handler)
    try:
        yield
    finally:
        for event, handler in handlers.items():
            page.remove_listener(event, handler)
