"""Clocks that disagree: a time from the future (a node whose clock runs fast) is named, by
`tooling validate` ([clock-skew]) and `tooling watch` (a log line), and never makes a stall look
recent (issue 21, defect 5)."""
from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from hypothesis import given, strategies as st

from support import tooling
from tooling.analysis.feed import feed_of
from tooling.records.clock import CLOCK_SLACK, DATE_SLACK, value_ahead
from tooling.records.model import Record
from tooling.rules.time_rules import check_clock

NOW = datetime.fromisoformat("2026-11-29T12:00:00+00:00")
FAST = NOW + timedelta(days=5)  # the clock of the node the trainer runs on


def at(delta: timedelta) -> str:
    return (NOW + delta).isoformat()


def test_a_heartbeat_from_the_future_does_not_keep_a_stalled_run_from_its_hang(repo: Path, tmp_path: Path) -> None:
    reported = tooling("--now", FAST.isoformat(), "report", "demo-7b", "--step", "5", cwd=repo)
    assert (reported.returncode, reported.stderr) == (0, "")  # on its node, the heartbeat is now
    log, state = repo / "train.log", tmp_path / "offsets.json"
    log.write_text("".join(f"step {n} | loss 2.{n}\n" for n in range(6)))
    said = ("tooling watch: run demo-7b: feed.heartbeat_at 2026-12-04T12:00:00+00:00 is 5 days ahead of this clock "
            "({now}): the clock of the node that wrote it runs fast; not taken as progress, only the logs' "
            "progress lines count\n")

    def watch(now: datetime) -> tuple[list[dict[str, object]], str]:
        done = tooling("--now", now.isoformat(), "watch", "train.log", "--run", "demo-7b", "--once", "--json",
                       "--state", str(state), cwd=repo)
        assert done.returncode == 0, done.stderr
        return [json.loads(line) for line in done.stdout.splitlines()], done.stderr

    assert watch(NOW) == ([], said.format(now=at(timedelta(0))))
    found, stderr = watch(NOW + timedelta(minutes=31))  # the stall window (30 minutes) has passed
    assert [(f["action"], f["failure_mode"], f["started_at"]) for f in found] == [
        ("created", "training.hang", NOW.isoformat())]
    assert stderr == said.format(now=at(timedelta(minutes=31)))
    assert watch(NOW + timedelta(days=4)) == ([], "")  # one hang per stall; raised: the rule is not read again

    checked = tooling("--now", at(timedelta(days=4)), "validate", cwd=repo)
    assert (checked.returncode, checked.stderr) == (0, "8 files checked: 0 errors, 2 warnings\n")
    assert checked.stdout == "".join(
        f"runbooks/runs/demo-7b.yaml:{where}: [clock-skew] warning: {named} is 24 h ahead of now "
        "(2026-12-03T12:00:00+00:00); expected a time that has come (the clock of the machine that wrote it runs "
        "fast?)\n" for where, named in (("9:17", "feed.heartbeat_at 2026-12-04T12:00:00+00:00"),
                                        ("11:12", "a time of feed.samples, 2026-12-04T12:00:00+00:00,")))


def test_validate_names_every_field_that_holds_a_future_time_once(repo: Path) -> None:
    run = repo / "runbooks" / "runs" / "demo-7b.yaml"
    events = "".join(f"    - {{at: {at(timedelta(hours=h))}, kind: signal, job_id: '7', signal: USR1}}\n"
                     for h in (-1, 2, 3, 4))
    run.write_text(run.read_text() + f"feed:\n  heartbeat_at: {at(timedelta(minutes=4))}\n  events:\n{events}")
    checked = tooling("--now", NOW.isoformat(), "validate", cwd=repo)
    assert (checked.returncode, checked.stdout) == (0, (
        "runbooks/runs/demo-7b.yaml:26:12: [clock-skew] warning: a time of feed.events, 2026-11-29T16:00:00+00:00, "
        "is 4 h ahead of now (2026-11-29T12:00:00+00:00); expected a time that has come (the clock of the machine "
        "that wrote it runs fast?)\n"))  # the heartbeat, 4 minutes ahead, is within the slack
    assert "1 warning" in checked.stderr
    strict = tooling("--now", NOW.isoformat(), "validate", "--strict", cwd=repo)
    assert strict.returncode == 1


# every kind of time a record holds, as text: a timestamp in some zone, a date, a month, a year
ZONES = st.sampled_from(["+00:00", "+09:00", "-07:00", "+14:00", "-12:00"])
SECONDS = st.integers(min_value=-10 * 86400, max_value=10 * 86400)


@given(offset=SECONDS, zone=ZONES)
def test_a_timestamp_is_ahead_exactly_when_it_is_later_than_now_by_more_than_the_slack(offset: int, zone: str) -> None:
    when = NOW + timedelta(seconds=offset)
    text = when.astimezone(datetime.fromisoformat(f"2026-01-01T00:00:00{zone}").tzinfo).isoformat()
    gap = value_ahead(text, NOW)
    assert (gap is not None) == (offset > CLOCK_SLACK.total_seconds())
    assert gap is None or gap == timedelta(seconds=offset)


@given(days=st.integers(min_value=-40, max_value=40), width=st.sampled_from([10, 7, 4]), offset=SECONDS)
def test_a_date_is_ahead_only_once_it_has_begun_nowhere(days: int, width: int, offset: int) -> None:
    now = NOW + timedelta(seconds=offset)
    text = (NOW + timedelta(days=days)).date().isoformat()[:width]
    begins = datetime.fromisoformat(text + {10: "", 7: "-01", 4: "-01-01"}[width] + "T00:00:00+00:00")
    assert (value_ahead(text, now) is not None) == (begins - now > DATE_SLACK)


@given(offsets=st.lists(SECONDS, min_size=1, max_size=6), appended=st.lists(SECONDS, max_size=3),
       dropped=st.integers(min_value=0, max_value=3))
def test_check_clock_names_a_field_once_and_a_machine_write_leaves_its_message(
        offsets: list[int], appended: list[int], dropped: int) -> None:
    def found(seconds: list[int]) -> list[str]:
        events = [{"at": at(timedelta(seconds=s)), "kind": "start", "job_id": "1"} for s in seconds]
        record = Record("runbooks/runs/demo-7b.yaml", {"kind": "run", "id": "demo-7b", "feed": {"events": events}})
        return [f"[{f.rule}] {f.message}" for f in check_clock([record], NOW)]

    ahead = [s for s in offsets if s > CLOCK_SLACK.total_seconds()]
    assert len(found(offsets)) == (1 if ahead else 0)
    # a writer whose clock is right appends times that are not ahead and drops the oldest: an
    # edit refused only for the warnings it brings in (edit.rewrite) is never refused for these
    now_or_before = [min(s, 0) for s in appended]
    later = offsets[min(dropped, len(offsets) - 1):] + now_or_before
    if max(later) == max(offsets):
        assert found(later) == found(offsets)


@given(offset=SECONDS, live=st.booleans(), stall=st.integers(min_value=1, max_value=600))
def test_the_run_page_never_counts_a_heartbeat_from_the_future_as_recent(offset: int, live: bool, stall: int) -> None:
    beat = NOW + timedelta(seconds=offset)
    feed = feed_of({"feed": {"heartbeat_at": beat.isoformat(), "stall_after_minutes": stall}}, now=NOW, live=live,
                   incidents={}, hang_ladder=None)
    assert feed is not None
    skewed = offset > CLOCK_SLACK.total_seconds()
    assert (feed.ahead is not None, feed.age is None) == (skewed, skewed)
    assert feed.stalled == (live and (skewed or -offset >= stall * 60))
    assert feed.watched == (live and not skewed)  # no age for the reader's browser to recompute
