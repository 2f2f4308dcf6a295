"""Repeat grouping by what followed a failure whose line reads the same whatever came after it (heldout-repeats-13,
issue 25), with made-up incidents. A job killed at its time limit: its requeue could not run ``scontrol``, failed
for no reason given, or the workflow runner took the kill for a success; none of these, it ran out of time with
nothing saved. Heat: a machine that powered off, a card that hung, or (neither) a GPU that throttled. A clause that
clears something ("there is no thermal issue") names nothing, and a dash ends a clause as a comma does."""
from __future__ import annotations

from test_repeats import _groups, _incident
from tooling.analysis.identity import identify
from tooling.analysis.incidents import incident_views

LIMIT = "slurmstepd: error: *** JOB 4242 ON gpu-017 CANCELLED AT 2026-03-02T04:00:11 DUE TO TIME LIMIT ***"
NO_SCONTROL_PY = "FileNotFoundError: [Errno 2] No such file or directory: 'scontrol'"
NO_SCONTROL_SH = "/bin/sh: 1: scontrol: not found"


def _crash(n: int, **fields: object):  # type: ignore[no-untyped-def]
    return _incident(n, symptom="crash", layer="unknown", **fields)


def _keys(records: list) -> dict[str, tuple[str, ...] | None]:  # type: ignore[type-arg]
    return {v.id: identify(v).key for v in incident_views(records)}


def test_what_followed_a_time_limit_tells_four_failures_apart() -> None:
    records = [_crash(1, signatures=[LIMIT, NO_SCONTROL_SH]),
               _crash(2, title="requeue at the time limit fails in the enroot container",
                      keywords=["the command `scontrol` is not available inside the container"]),
               _crash(3, signatures=[LIMIT], keywords=["auto-resubmit is not working for me"]),
               _crash(4, title="time limit reached, unable to requeue the job"),
               _crash(5, signatures=[LIMIT], keywords=["the runner does not detect walltime terminations"]),
               _crash(6, title="time limit kill appears to have succeeded in the workflow"),
               _crash(7, signatures=[LIMIT], keywords=["lost two days of training since the last checkpoint"]),
               _crash(8, title="the training job is killed by the 24 hour time limit")]
    assert sorted(_groups(records)) == [["INC-0001", "INC-0002"], ["INC-0003", "INC-0004"], ["INC-0005", "INC-0006"],
                                        ["INC-0007", "INC-0008"]]
    keys = _keys(records)
    assert keys["INC-0001"] == ("mode", "scheduler.time-limit", "after-limit=requeue-unreachable")
    assert keys["INC-0007"] == ("mode", "scheduler.time-limit")  # nothing followed: out of time, nothing saved


def test_a_requeue_that_could_not_run_scontrol_is_that_whatever_signal_came() -> None:
    # preempted: the same missing command; "unable to requeue" beside it says no more than it
    records = [_crash(1, title="preemption on slurm: checkpoint fails", signatures=[NO_SCONTROL_PY]),
               _crash(2, title="job preempted, unable to requeue", keywords=["scontrol: command not found"]),
               _crash(3, title="job preempted by a higher priority job")]
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003"]]
    assert _keys(records)["INC-0002"] == ("mode", "scheduler.preemption", "after-limit=requeue-unreachable")


def test_words_of_a_requeue_that_worked_say_nothing_of_one_that_failed() -> None:
    # a requeue on node failure is a setting; "reboot the node" is a remedy, not a machine that went down
    records = [_crash(1, signatures=[LIMIT], keywords=["#SBATCH --requeue on node failure"]),
               _crash(2, signatures=[LIMIT], keywords=["requeued and resumed from the last checkpoint"]),
               _incident(3, symptom="slowdown", layer="unknown", title="GPU throttles when hot",
                         keywords=["reboot the node to reset the clocks"]),
               _incident(4, symptom="slowdown", layer="unknown", title="thermal slowdown after an hour")]
    assert sorted(_groups(records)) == [["INC-0001", "INC-0002"], ["INC-0003", "INC-0004"]]


def test_what_heat_did_tells_a_power_off_a_hang_and_a_throttle_apart() -> None:
    records = [_crash(1, title="Monitor turns off while training", keywords=["It seems to be a overheating problem."]),
               _crash(2, title="machine shuts down during training", keywords=["more than likely due to overheating"]),
               _incident(3, symptom="hang", layer="unknown", title="training freezes",
                         keywords=["a thermal issue: with lower clocks it runs to completion without hanging"]),
               _incident(4, symptom="hang", layer="unknown", title="the card hangs when it overheats"),
               _incident(5, symptom="slowdown", layer="unknown",
                         keywords=["the GPU throttles down to keep the temperature at 84 degrees"]),
               _incident(6, symptom="slowdown", layer="unknown", title="thermal throttling halves the speed")]
    assert sorted(_groups(records)) == [["INC-0001", "INC-0002"], ["INC-0003", "INC-0004"], ["INC-0005", "INC-0006"]]
    assert _keys(records)["INC-0001"] == ("mode", "gpu.thermal", "heat=heat-shutdown")


def test_a_clause_that_clears_heat_names_none_and_a_dash_ends_a_clause() -> None:
    cleared = _incident(1, symptom="slowdown", layer="unknown", title="massive slowdown in training",
                        keywords=["There is no thermal issue, IO is idle"])
    dashed = _crash(2, title="system powered off during the loop",
                    keywords=["the shutdown is not a GPU bug — it's a thermal shutdown on my hardware"])
    mode = identify(incident_views([cleared])[0]).mode
    assert mode is None or mode.id != "gpu.thermal"  # it was one before the clause went
    assert identify(incident_views([dashed])[0]).key == ("mode", "gpu.thermal", "heat=heat-shutdown")
