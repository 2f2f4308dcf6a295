"""A run's feed on its page and its home-page card, in real headless Chromium: the heartbeat's
age, the steps-per-hour chart, the last scheduler events, and red once progress stops.

The site is built once at T (``--now``) and never rebuilt: everything that changes between
readings is freshness.js recomputing the age and the stall with the reader's (Playwright's) clock.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Iterator

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from site_support import NOW, Opener, build_copy, page_opener, served
from test_accessibility import AXE, RUN_AXE
from test_dark_mode import contrast
from tooling.site.filters import elapsed

T = datetime.fromisoformat(NOW)  # the build's now: 2026-11-29T12:00Z
DEMO_BEAT = datetime.fromisoformat("2026-11-29T11:56:00+00:00")  # runbooks/runs/demo-7b.yaml
STALL = timedelta(minutes=30)  # the demo's stall_after_minutes
LATER = T + STALL + timedelta(hours=1)  # the demo's heartbeat is then 1 h 34 min old
DEMO = "Demo 7B pretraining, 3T tokens on atlas"
HOSTILE = "<img src=x onerror=alert(1)> [x](javascript:alert(2)) *loud* <b>bold?</b>"

# Hung at build time: no heartbeat for 2 h 10 min; its events carry hostile text.
HUNG_RUN = f"""kind: run
id: hung-3b
title: Hung 3B
owner: ana
state: running
updated_at: 2026-11-29T11:00:00+00:00
feed:
  heartbeat_at: 2026-11-29T09:50:00+00:00
  samples:
    - {{at: 2026-11-29T09:30:00+00:00, step: 100}}
    - {{at: 2026-11-29T09:40:00+00:00, step: 160}}
    - {{at: 2026-11-29T09:50:00+00:00, step: 220}}
  events:
    - {{at: 2026-11-29T09:00:00+00:00, kind: start, job_id: "<b>51</b>", host: node9, detail: "{HOSTILE}"}}
"""
# Ended three days before T: its heartbeat is old, and that is no stall.
DONE_RUN = """kind: run
id: done-1b
title: Done 1B
owner: ben
state: finished
updated_at: 2026-11-26T12:30:00+00:00
feed:
  heartbeat_at: 2026-11-26T12:00:00+00:00
  stall_after_minutes: 10
  samples:
    - {at: 2026-11-26T11:50:00+00:00, step: 9000}
    - {at: 2026-11-26T12:00:00+00:00, step: 9100}
  events:
    - {at: 2026-11-26T12:01:00+00:00, kind: end, job_id: "61", exit_code: 0, state: COMPLETED}
"""
# Only the scheduler hooks report (no training-loop reporter): events, no heartbeat, no chart.
QUIET_RUN = """kind: run
id: quiet-2b
title: Quiet 2B
owner: cho
state: running
updated_at: 2026-11-29T11:00:00+00:00
feed:
  events:
    - {at: 2026-11-29T10:00:00+00:00, kind: end, job_id: "71", exit_code: 137, state: FAILED, incident: INC-0014}
"""
# Its node's clock runs five days fast: a heartbeat from the future, which says nothing of when the
# run last made progress (issue 21, defect 5).
FAST_RUN = """kind: run
id: fast-1b
title: Fast 1B
owner: eve
state: running
updated_at: 2026-11-29T11:00:00+00:00
feed:
  heartbeat_at: 2026-12-04T12:00:00+00:00
"""
# No feed at all: the page and card show nothing new.
PLAIN_RUN = """kind: run
id: plain-1b
title: Plain 1B
owner: dev
state: running
updated_at: 2026-11-29T11:00:00+00:00
"""


@pytest.fixture(scope="module")
def site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(build_copy(tmp_path_factory.mktemp("feed-repo"), {
        "runbooks/runs/hung-3b.yaml": HUNG_RUN, "runbooks/runs/done-1b.yaml": DONE_RUN,
        "runbooks/runs/quiet-2b.yaml": QUIET_RUN, "runbooks/runs/plain-1b.yaml": PLAIN_RUN,
        "runbooks/runs/fast-1b.yaml": FAST_RUN})) as url:
        yield url


@pytest.fixture
def open_page(browser: Browser, site_url: str) -> Iterator[Opener]:
    """A fresh tab per call, its clock at T unless told (site_support.page_opener)."""
    with page_opener(browser, site_url, at=T) as open_page:
        yield open_page


def card(page: Page, title: str) -> Locator:
    return page.locator(".run-cards > ul > li").filter(has_text=title)


def alarm_text(age: str, ladder: str = "hang ladder") -> str:
    return f"No progress for {age} — the run may be hung: start at the {ladder}."


STALLED = re.compile(r"\bstalled\b")


def test_before_the_stall_the_card_and_the_page_are_normal(open_page: Opener) -> None:
    page = open_page("/", at=T + timedelta(minutes=10))
    demo = card(page, DEMO)
    expect(demo.locator(".feed")).to_have_text("Last heartbeat 14 min ago", use_inner_text=True)
    expect(demo.locator(".feed")).not_to_have_class(STALLED)
    expect(demo.locator("[data-stalled-alarm]")).to_be_hidden()
    expect(demo.locator("svg.playbook-chart .chart-title")).to_have_text("Steps per hour over the last day")
    rows = demo.locator("table tbody tr")
    expect(rows).to_have_count(3)  # the last three events, newest first
    expect(rows.nth(0)).to_have_text(re.compile(r"2026-11-29 11:27 UTC\s*4818112\s*start at step 609,500"))
    expect(rows.nth(2)).to_contain_text("exit 0 PREEMPTED")

    page = open_page("/generated/runs/demo-7b/", at=T + timedelta(minutes=10))
    expect(page.locator("div.feed")).not_to_have_class(STALLED)
    expect(page.locator("div.feed > p").first).to_have_text(
        "Last heartbeat 14 min ago (2026-11-29 11:56 UTC); the run counts as hung after 30 min without one.")
    expect(page.locator("[data-stalled-alarm]")).to_be_hidden()


def test_at_T_plus_the_stall_plus_an_hour_it_turns_red_and_says_so_without_a_rebuild(open_page: Opener,
                                                                                      site_url: str) -> None:
    page = open_page("/generated/runs/demo-7b/", at=LATER)
    expect(page.locator("div.feed")).to_have_class(STALLED)
    alarm = page.locator("[data-stalled-alarm]")
    expect(alarm).to_be_visible()
    expect(alarm).to_have_text(alarm_text("1 h 34 min"))
    alarm.get_by_role("link", name="hang ladder").click()
    expect(page).to_have_url(site_url + "/generated/ladders/hang/")

    page = open_page("/", at=LATER)
    demo = card(page, DEMO)
    expect(demo.locator(".feed")).to_have_class(STALLED)
    expect(demo.locator("[data-stalled-alarm]")).to_have_text(". " + alarm_text("1 h 34 min"))
    expect(demo.locator(".feed")).to_have_text("Last heartbeat 1 h 34 min ago. " + alarm_text("1 h 34 min"),
                                               use_inner_text=True)

    # a tab left open turns red on the script's minute timer
    page = open_page("/", at=T + timedelta(minutes=10))
    expect(card(page, DEMO).locator(".feed")).not_to_have_class(STALLED)
    page.clock.fast_forward("01:20:00")
    expect(card(page, DEMO).locator("[data-stalled-alarm]")).to_be_visible()
    expect(card(page, DEMO).locator(".feed")).to_have_class(STALLED)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_red_meets_contrast_in_both_palettes(open_page: Opener, scheme: str) -> None:
    """The alarm's words 4.5:1, the bar beside the feed and the card's border 3:1, against the
    page's background; all in the one red."""
    for path, painted in (("/", ".run-cards > ul > li:has(.feed.stalled)"), ("/generated/runs/demo-7b/", "div.feed")):
        page = open_page(path, at=LATER, scheme=scheme)
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        words = page.locator(".feed-alarm strong").first
        expect(words).to_be_visible()
        red = words.evaluate("e => getComputedStyle(e).color")
        # the same red; a card's border eases into it (mkdocs-material's .25 s transition), so wait
        expect(page.locator(painted).first).to_have_css("border-left-color", red)
        assert contrast(red, background) >= 4.5, (path, scheme, red, background)  # so the bar's 3:1 too
        if path == "/":  # the card: all four borders, and a bar inside its left edge
            expect(page.locator(painted).first).to_have_css("border-top-color", red)
            expect(page.locator(painted).first).to_have_css("box-shadow", re.compile(re.escape(red) + " .*inset$"))


def test_without_javascript_the_build_time_state_stays(open_page: Opener) -> None:
    page = open_page("/generated/runs/hung-3b/", at=None, javascript=False)
    expect(page.locator("div.feed")).to_have_class(STALLED)
    expect(page.locator("[data-stalled-alarm]")).to_have_text(alarm_text("2 h 10 min"))
    page = open_page("/", at=None, javascript=False)
    expect(card(page, DEMO).locator(".feed")).to_have_text("Last heartbeat 4 min ago", use_inner_text=True)
    expect(card(page, "Hung 3B").locator("[data-stalled-alarm]")).to_be_visible()


def test_the_browser_writes_durations_as_the_build_does(open_page: Opener) -> None:
    clock = DEMO_BEAT + timedelta(seconds=30)
    page = open_page("/generated/runs/demo-7b/", at=clock)
    age = page.locator("div.feed [data-heartbeat-age]")
    expect(age).to_have_text("under 1 min")
    seen = []
    # each jump at least a minute: the script refreshes on its minute timer
    for jump in (timedelta(minutes=1), timedelta(minutes=57), timedelta(minutes=2), timedelta(minutes=70),
                 timedelta(hours=45, minutes=49), timedelta(hours=28, minutes=59), timedelta(days=10)):
        page.clock.fast_forward(int(jump.total_seconds() * 1000))
        clock += jump
        expect(age).to_have_text(elapsed(clock - DEMO_BEAT))
        seen.append(elapsed(clock - DEMO_BEAT))
    assert seen == ["1 min", "58 min", "1 h", "2 h 10 min", "47 h 59 min", "3 days 4 h", "13 days 4 h"]


def test_the_chart_has_its_title_axes_and_the_values_of_the_table(open_page: Opener) -> None:
    page = open_page("/generated/runs/demo-7b/")
    chart = page.locator("div.feed svg.playbook-chart")
    texts = chart.locator("text").all_text_contents()
    assert texts[:7] == ["Steps per hour over the last day", "2026-11-28 12:00 – 2026-11-29 12:00 UTC",
                         "0", "200", "400", "600", "800"]
    assert texts[7] == "Steps" and texts[-1] == "Hour starting (UTC)"
    page.locator("details summary", has_text="Steps per hour, hour by hour").click()
    table = page.locator("details table tbody tr td:last-child").all_inner_texts()
    values = [t for t in texts[8:-1] if ":" not in t]  # the hour labels are the ones with a colon
    assert values == table and len(values) == 24
    expect(page.locator("div.feed")).to_contain_text("10,222 steps in the 24 hours to 2026-11-29 12:00 UTC.")
    home = open_page("/")
    for tab in (page, home):  # drawn at full size on the page and in the card: 12 px stays 12 px
        svg = tab.locator("svg.playbook-chart").first
        assert svg.evaluate("svg => svg.getBoundingClientRect().width / svg.viewBox.baseVal.width") == 1


def test_the_run_page_lists_the_last_ten_scheduler_events_with_their_incidents(open_page: Opener,
                                                                                 site_url: str) -> None:
    page = open_page("/generated/runs/demo-7b/")
    table = page.locator("table", has=page.locator("th", has_text="Exit code / state"))
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(10)
    expect(rows.nth(3)).to_have_text(re.compile(
        r"2026-11-29 08:05 UTC\s*4818112\s*signal TERM at step 609,497: Preempted by a higher-priority job, "
        r"300 s grace\.\s*$"))
    expect(rows.nth(9)).to_contain_text("exit 143 CANCELLED")
    rows.nth(9).get_by_role("link", name="INC-0014").click()
    expect(page).to_have_url(site_url + "/generated/incidents/INC-0014/")


def test_record_text_in_the_feed_shows_literally(open_page: Opener) -> None:
    page = open_page("/generated/runs/hung-3b/")
    row = page.locator("table", has=page.locator("th", has_text="Exit code / state")).locator("tbody tr")
    expect(row).to_have_text(re.compile(re.escape("<b>51</b>") + r"\s*" + re.escape(f"start: {HOSTILE}")))
    assert page.locator("article img, article b, article a[href^='javascript:' i]").count() == 0


@pytest.mark.parametrize("reader", [T, LATER, T + timedelta(days=6), None])
def test_a_heartbeat_from_the_future_is_named_and_red_never_just_now(open_page: Opener,
                                                                     reader: datetime | None) -> None:
    skew = ("Last heartbeat 5 days in the future: the clock of the node that wrote it runs fast, so when the run "
            "last made progress is not known")
    page = open_page("/generated/runs/fast-1b/", at=reader, javascript=reader is not None)
    expect(page.locator("div.feed")).to_have_class(STALLED)
    expect(page.locator("div.feed > p").first).to_have_text(f"{skew} (2026-12-04 12:00 UTC).")
    page = open_page("/", at=reader, javascript=reader is not None)
    expect(card(page, "Fast 1B").locator(".feed")).to_have_text(skew, use_inner_text=True)
    expect(card(page, "Fast 1B").locator(".feed")).to_have_class(STALLED)


def test_a_finished_run_never_turns_red(open_page: Opener) -> None:
    page = open_page("/generated/runs/done-1b/", at=T + timedelta(days=5))
    expect(page.locator("div.feed")).to_contain_text("Last heartbeat 8 days ago (2026-11-26 12:00 UTC).")
    expect(page.locator("div.feed")).not_to_have_class(STALLED)
    assert page.locator("[data-stalled-alarm]").count() == 0
    expect(page.locator("div.feed svg.playbook-chart")).to_have_count(1)  # its last day of training


def test_runs_without_a_feed_or_a_heartbeat_show_nothing_new(open_page: Opener) -> None:
    page = open_page("/generated/runs/plain-1b/")
    assert page.locator("div.feed, svg.playbook-chart, [data-heartbeat-at]").count() == 0
    assert page.locator("h2", has_text=re.compile("Progress feed|Scheduler events")).count() == 0
    page = open_page("/generated/runs/quiet-2b/")  # events only: the table, no heartbeat, no chart
    assert page.locator("div.feed, svg.playbook-chart, [data-heartbeat-at], [data-stalled-alarm]").count() == 0
    expect(page.locator("h2", has_text=re.compile("Progress feed|Scheduler events"))).to_have_text(
        ["Scheduler events¶"])  # with its permalink
    expect(page.locator("table", has=page.locator("th", has_text="Exit code / state"))).to_contain_text(
        "exit 137 FAILED")
    home = open_page("/")
    for title in ("Plain 1B", "Quiet 2B"):
        assert card(home, title).locator(".feed, svg").count() == 0
    expect(card(home, "Plain 1B").locator("table")).to_have_count(0)
    expect(card(home, "Quiet 2B").locator("table")).to_contain_text("INC-0014")


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("path", ["/", "/generated/runs/demo-7b/", "/generated/runs/hung-3b/"])
def test_axe_finds_nothing_serious_on_a_stalled_run(open_page: Opener, scheme: str, path: str) -> None:
    page = open_page(path, at=LATER, scheme=scheme)
    page.wait_for_load_state("networkidle")
    expect(page.locator("[data-stalled-alarm]").first).to_be_visible()
    page.add_script_tag(path=str(AXE))
    assert page.evaluate(RUN_AXE) == []
