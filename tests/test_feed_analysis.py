"""The run feed's analyses (tooling/analysis/feed.py), its duration words and its chart: worked examples."""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from support import PROJECT
from tooling.analysis import analyse
from tooling.analysis.feed import HourSteps, feed_of, heartbeat_age, is_stalled, steps_per_hour, window_end
from tooling.records.model import Record
from tooling.rules.validate import repository_records
from tooling.site import charts
from tooling.site.filters import elapsed

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
H = timedelta(hours=1)
M = timedelta(minutes=1)


def at(delta: timedelta) -> str:
    return (NOW + delta).isoformat()


def run(**fields: Any) -> Record:
    data = {"kind": "run", "id": "r1", "title": "Run one", "owner": "ana", "state": "running",
            "updated_at": "2026-11-29T09:00:00+00:00", **fields}
    return Record("runbooks/runs/r1.yaml", data)


def incident(n: int) -> Record:
    return Record(f"incidents/INC-{n:04d}.yaml", {
        "kind": "incident", "id": f"INC-{n:04d}", "title": f"incident {n}", "run": "r1", "status": "open",
        "severity": "sev2", "symptom": "hang", "layer": "nccl", "detected_at": "2026-11-29T10:00:00+00:00"})


def ladder(id: str, symptom: str) -> Record:
    return Record(f"runbooks/ladders/{id}.yaml", {"kind": "ladder", "id": id, "symptom": symptom})


def test_steps_are_credited_to_the_hour_of_the_sample_that_saw_them() -> None:
    end = NOW
    samples = [(NOW - 3 * H - 5 * M, 1000),  # before the window: only a base
               (NOW - 3 * H + 5 * M, 1100),  # 100 in the hour from 09:00 (the window's first, of three)
               (NOW - 2 * H + 30 * M, 1400),  # 300 in 10:00
               (NOW - 2 * H + 40 * M, 900),  # a resume from an older checkpoint: credits nothing
               (NOW - 1 * H + 10 * M, 1000),  # 100 in 11:00, counted from the resumed step
               (NOW + 5 * M, 1200)]  # after the window's end: not drawn
    hours = steps_per_hour(reversed(samples), end, hours=3)  # the order given does not matter
    assert hours == [HourSteps(NOW - 3 * H, 100), HourSteps(NOW - 2 * H, 300), HourSteps(NOW - H, 100)]


def test_a_sample_on_the_hour_belongs_to_the_hour_it_starts() -> None:
    samples = [(NOW - 2 * H, 0), (NOW - H, 50), (NOW, 80)]
    assert [h.steps for h in steps_per_hour(samples, NOW, hours=2)] == [0, 50]


def test_the_window_ends_at_the_last_whole_hour_of_a_live_run_and_after_the_last_sample_of_an_ended_one() -> None:
    samples = [(NOW - 50 * H + 20 * M, 10)]
    assert window_end(samples, NOW + 35 * M, live=True) == NOW
    assert window_end(samples, NOW + 35 * M, live=False) == NOW - 49 * H
    in_tokyo = datetime(2026, 11, 29, 21, 35, tzinfo=timezone(timedelta(hours=9)))
    assert window_end([], in_tokyo, live=True) == NOW  # hours are UTC hours


@pytest.mark.parametrize(("age", "live", "stalled"), [
    (30 * M, True, True),  # exactly the threshold: no progress for 30 minutes, as tooling watch counts it
    (30 * M - timedelta(seconds=1), True, False),
    (30 * M + timedelta(seconds=1), True, True),
    (5 * H, False, False),  # a run that ended cannot stall
    (None, True, False),  # no heartbeat, nothing to judge by
])
def test_stalled_means_a_live_run_whose_heartbeat_is_as_old_as_the_threshold_or_older(
        age: timedelta | None, live: bool, stalled: bool) -> None:
    assert is_stalled(age, 30 * M, live=live) is stalled


def test_a_heartbeat_from_the_future_is_just_now() -> None:
    assert heartbeat_age(NOW + 2 * M, NOW) == timedelta(0)
    assert heartbeat_age(NOW - 130 * M, NOW) == 130 * M


def test_a_run_without_a_feed_has_none() -> None:
    card = analyse([run()], now=NOW).runs[0]
    assert card.feed is None
    assert feed_of({"feed": {}}, now=NOW, live=True, incidents={}, hang_ladder=None) is None


def test_the_feed_of_a_live_run_at_two_times() -> None:
    events = [{"at": at(-5 * H + i * M), "kind": "start", "job_id": f"{i}"} for i in range(12)]
    events.append({"at": at(-2 * H), "kind": "end", "job_id": "77", "exit_code": 134, "state": "FAILED",
                   "incident": "INC-0001"})
    events.append({"at": at(-90 * M), "kind": "end", "job_id": "78", "incident": "INC-0404"})
    feed = {"heartbeat_at": at(-4 * M), "samples": [{"at": at(-90 * M), "step": 10}, {"at": at(-4 * M), "step": 70}],
            "events": events}
    records = [run(feed=feed), incident(1), ladder("hang", "hang"), ladder("crash", "crash")]
    card = analyse(records, now=NOW).runs[0]
    f = card.feed
    assert (f.age, f.stall_after, f.watched, f.stalled, f.hang_ladder) == (4 * M, 30 * M, True, False, "hang")
    assert (len(f.hours), f.hours[-1], f.steps_last_day, f.until) == (24, HourSteps(NOW - H, 60), 60, NOW)
    assert [e.data["job_id"] for e in f.events] == ["78", "77", "11", "10", "9", "8", "7", "6", "5", "4"]
    assert f.events[0].incident is None  # names an incident that does not exist: shown as text, not linked
    assert f.events[1].incident is not None and f.events[1].incident.id == "INC-0001"

    later = analyse(records, now=NOW + 31 * M).runs[0].feed
    assert (later.age, later.stalled) == (35 * M, True)


def test_a_finished_run_never_stalls_and_charts_its_last_day() -> None:
    feed = {"heartbeat_at": at(-72 * H), "stall_after_minutes": 5,
            "samples": [{"at": at(-73 * H), "step": 0}, {"at": at(-72 * H), "step": 500}]}
    f = analyse([run(state="finished", feed=feed)], now=NOW).runs[0].feed
    assert (f.age, f.stall_after, f.watched, f.stalled) == (72 * H, 5 * M, False, False)
    assert (f.until, f.hours[-1].steps) == (NOW - 71 * H, 500)


def test_a_feed_of_events_only_has_no_heartbeat_and_no_chart() -> None:
    feed = {"events": [{"at": at(-H), "kind": "requeue", "job_id": "9"}]}
    f = analyse([run(feed=feed)], now=NOW).runs[0].feed
    assert (f.heartbeat_at, f.age, f.watched, f.stalled, f.hours, f.until, f.hang_ladder) == \
        (None, None, False, False, [], None, None)
    assert [e.data["kind"] for e in f.events] == ["requeue"]


def test_the_bundled_demo_run_at_the_site_tests_time() -> None:
    """The demo's feed agrees with its own record: the machines' progress and checkpoint, a day
    at its throughput with the two requeues it went through, and it is fresh at the tests' 'now'."""
    records = repository_records(PROJECT, jobs=1)
    card = next(c for c in analyse(records, now=NOW).runs if c.id == "demo-7b")
    f = card.feed
    assert (f.age, f.stalled) == (4 * M, False)
    assert card.data["feed"]["samples"][-1]["step"] == card.data["progress"]["step"]
    assert [h.steps for h in f.hours] == [102, 0, 0, 0, 526, 613, 613, 613, 613, 614, 613, 613, 613, 614, 613, 613,
                                          613, 613, 614, 613, 102, 0, 0, 294]
    ends = [e for e in f.events if e.data["kind"] == "end"]
    assert ends[0].data["step"] == card.data["last_good_checkpoint"]["step"]
    assert any(e.incident is not None for e in f.events)
    assert analyse(records, now=NOW + 90 * M).runs[0].feed.stalled


@pytest.mark.parametrize(("delta", "text"), [
    (timedelta(seconds=59), "under 1 min"), (M, "1 min"), (59 * M, "59 min"), (H, "1 h"),
    (130 * M, "2 h 10 min"), (47 * H + 59 * M, "47 h 59 min"), (48 * H, "2 days"), (76 * H + 59 * M, "3 days 4 h"),
    (-M, "under 1 min"),
])
def test_elapsed_reads_like_a_person_says_it(delta: timedelta, text: str) -> None:
    assert elapsed(delta) == text


def test_the_steps_chart_has_its_title_axes_ticks_and_every_value() -> None:
    starts = [NOW - (4 - i) * H for i in range(4)]
    svg = str(charts.hourly_bars(starts, [613, 0, 1200, 7], label="Steps per hour", axis="Steps",
                                 hours_axis="Hour starting (UTC)"))
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    span = f"{starts[0]:%Y-%m-%d %H:%M} – {NOW:%Y-%m-%d %H:%M} UTC"  # the window: to the end of the last hour
    assert texts == ["Steps per hour", span, "0", "500", "1,000", "1,500", "Steps", "613", "08:00", "0", "1,200",
                     "10:00", "7", "Hour starting (UTC)"]
    assert svg.count('class="bar"') == 3  # an hour without steps has its 0 and no bar
    assert f'aria-label="Steps per hour ({span})"' in svg and f'fill="{charts.OTHER}"' in svg
    day = charts.hourly_bars([NOW - (24 - i) * H for i in range(24)], [600] * 24, label="Day", axis="Steps",
                             hours_axis="Hour")
    assert re.search(r'viewBox="0 0 (\d+) ', str(day)).group(1) == "614"  # fits a home-page card unscaled
