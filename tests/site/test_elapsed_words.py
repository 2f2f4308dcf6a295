"""freshness.js in the Korean edition: the heartbeat's age in the words the page hands it
(data-elapsed-words, from the catalogue), the same text the build writes; in real Chromium."""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from playwright.sync_api import Browser, expect

from tooling.site.filters import elapsed
from tooling.site.freshness import attribute, elapsed_words
from tooling.site.i18n import edition

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "assets" / "javascripts" / "freshness.js"
BEAT = datetime.fromisoformat("2026-11-29T11:56:00+00:00")


def test_the_browser_writes_korean_durations_as_the_build_does(browser: Browser) -> None:
    ko = edition("ko")
    context = browser.new_context()
    page = context.new_page()
    clock = BEAT + timedelta(seconds=30)
    page.clock.install(time=clock)
    page.set_content(f'<p data-heartbeat-at="2026-11-29T11:56:00Z" data-elapsed-words="{attribute(elapsed_words(ko))}">'
                     "<span data-heartbeat-age></span></p><p data-heartbeat-at=\"2026-11-29T11:56:00Z\">"
                     "<span data-heartbeat-age></span></p>")
    page.add_script_tag(path=str(SCRIPT))
    korean, english = page.locator("[data-heartbeat-age]").nth(0), page.locator("[data-heartbeat-age]").nth(1)
    expect(korean).to_have_text("1분 미만")
    seen = []
    for jump in (timedelta(minutes=1), timedelta(minutes=129), timedelta(hours=46), timedelta(hours=28)):
        page.clock.fast_forward(int(jump.total_seconds() * 1000))
        clock += jump
        expect(korean).to_have_text(elapsed(clock - BEAT, t=ko))
        expect(english).to_have_text(elapsed(clock - BEAT))  # a page without words: English, as before
        seen.append(elapsed(clock - BEAT, t=ko))
    context.close()
    assert seen == ["1분", "2시간 10분", "2일", "3일 4시간"]
