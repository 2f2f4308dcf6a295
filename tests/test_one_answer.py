"""One fact, one answer (issue 22, item 4): the stall rule and its default, the run-ended states
and the SLURM job id are each decided in one place, and every reader agrees with it."""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tooling.analysis.feed import feed_of, is_stalled
from tooling.records.runs import ENDED, NOT_STARTED, STALL_AFTER_MINUTES, has_ended, is_live, stall_minutes, stalled
from tooling.records.schema import schema_for
from tooling.slurm.job import Job, job_id
from tooling.watch.progress import Progress, Stall

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)


@given(minutes=st.integers(min_value=1, max_value=600),
       offset=st.one_of(st.sampled_from([-1, 0, 1]), st.integers(min_value=-36_000, max_value=36_000)))
def test_the_run_page_and_tooling_watch_call_the_same_silence_a_stall(minutes: int, offset: int) -> None:
    """The page said 'stalled' only past the threshold, the watch filed its hang at it."""
    silence = max(minutes * 60 + offset, 0)  # seconds without progress, around the threshold
    age = timedelta(seconds=silence)
    beat = (NOW - age).isoformat()
    page = feed_of({"state": "running", "feed": {"heartbeat_at": beat, "stall_after_minutes": minutes}}, now=NOW,
                   live=True, incidents={}, hang_ladder=None)
    assert page is not None
    watch = Stall(Progress(NOW - age, "train.log", 1, "step 1")).due(NOW, minutes)
    assert page.stalled == watch == is_stalled(age, timedelta(minutes=minutes), live=True) == stalled(age, minutes)
    assert watch == (silence >= minutes * 60)


def test_the_default_threshold_is_the_one_the_schema_states() -> None:
    spec = schema_for("run")["properties"]["feed"]["properties"]["stall_after_minutes"]
    assert re.search(r"\bDefault (\d+)\b", spec["description"])[1] == str(STALL_AFTER_MINUTES)  # type: ignore[index]
    assert stall_minutes({"feed": {}}) == (STALL_AFTER_MINUTES, False)
    assert stall_minutes({"feed": {"stall_after_minutes": 5}}) == (5, True)
    page = feed_of({"feed": {"heartbeat_at": NOW.isoformat()}}, now=NOW, live=True, incidents={}, hang_ladder=None)
    assert page is not None and page.stall_after == timedelta(minutes=STALL_AFTER_MINUTES)


def test_every_state_is_live_or_not_started_or_ended() -> None:
    states = schema_for("run")["properties"]["state"]["enum"]
    assert set(NOT_STARTED) | set(ENDED) <= set(states)
    for state in states:
        run = {"state": state}
        assert (is_live(run), has_ended(run)) == (state not in (*NOT_STARTED, *ENDED), state in ENDED)
    # a scheduler's end as the latest event ends a run whatever its state says
    assert has_ended({"state": "running", "feed": {"events": [{"kind": "start"}, {"kind": "end"}]}})
    assert not has_ended({"state": "running", "feed": {"events": [{"kind": "end"}, {"kind": "start"}]}})


@pytest.mark.parametrize(("env", "shown"), [
    ({"SLURM_JOB_ID": "77"}, "77"),
    ({"SLURM_JOB_ID": "77", "SLURM_ARRAY_JOB_ID": "70", "SLURM_ARRAY_TASK_ID": "7"}, "70_7"),
    ({"SLURM_JOB_ID": "77", "SLURM_ARRAY_JOB_ID": "70"}, "77"),  # an array's id without its task: the job's
    ({}, None),
    ({"SLURM_JOB_ID": "", "SLURM_ARRAY_JOB_ID": "", "SLURM_ARRAY_TASK_ID": ""}, None),
])
def test_the_job_id_is_read_from_the_environment_once(env: dict[str, str], shown: str | None) -> None:
    job = Job.from_environment(env)
    assert job_id(env) == shown
    assert (job.job_id if job is not None else None) == shown
