"""Repeat grouping on what a record's words say (issue 25, item 3), with made-up incidents: a
routine message (one the catalogue says recovers on its own) is no evidence of the failure it can
precede, and a record that names a cause and its consequence is the cause."""
from __future__ import annotations

from test_repeats import NOW, _groups, _incident
from tooling.analysis import analyse
from tooling.analysis.identity import identify
from tooling.analysis.incidents import incident_views
from tooling.messages import render

FLOOR = "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run."
SKIP = "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768"


def test_routine_overflow_skips_are_not_the_loss_scale_collapse_they_can_precede() -> None:
    records = [_incident(1, symptom="crash", layer="training-dynamics", signatures=[FLOOR]),
               _incident(2, symptom="other", layer="training-dynamics", title="Gradient overflow messages: normal?",
                         keywords=["gradient overflow skipping step"]),
               _incident(3, symptom="crash", layer="training-dynamics", title="run exits at the loss-scale floor",
                         signatures=[SKIP, FLOOR]),
               _incident(4, symptom="other", layer="training-dynamics", signatures=[SKIP],
                         title="many fp16 overflow warnings, the run keeps training")]
    groups = _groups(records)
    assert ["INC-0001", "INC-0003"] in groups  # the floor exits: one failure
    assert ["INC-0002", "INC-0004"] in groups  # the same routine message asked about twice: not a failure
    routine = identify(incident_views(records)[1])
    assert routine.key == ("routine", "training.fp16-overflow") and routine.mode is None
    [why] = [render(g.explanation) for g in analyse(records, now=NOW).groups if g.incidents[0].id == "INC-0002"]
    assert why == "routine message of training.fp16-overflow, no failure by itself"


def test_an_unknown_error_line_outweighs_a_routine_message_beside_it() -> None:
    one = _incident(1, symptom="crash", signatures=[SKIP, "RuntimeError: shard index 7 exceeds the manifest of the mixer"],
                    title="gradient overflow skips, then the data mixer failed")
    assert identify(incident_views([one])[0]).key[0] == "text"


def test_a_record_naming_the_collapse_and_the_nan_it_caused_is_the_collapse() -> None:
    records = [_incident(1, symptom="crash", layer="training-dynamics", signatures=[FLOOR]),
               _incident(2, symptom="nan", layer="training-dynamics", signatures=[SKIP],
                         title="overflow after 200 steps, the loss scale falls to 1 and the loss turns NaN"),
               _incident(3, symptom="nan", layer="training-dynamics", signatures=["step 420: loss nan, grad norm nan"],
                         title="loss went NaN after a bad batch")]
    groups = _groups(records)
    assert ["INC-0001", "INC-0002"] in groups and ["INC-0003"] in groups


def test_a_record_in_words_only_is_keyed_by_the_mode_its_words_and_its_layer_name() -> None:
    full = dict(symptom="checkpoint", layer="storage")
    records = [_incident(1, **full, signatures=["OSError: [Errno 28] No space left on device"]),
               # "local disk" is also an SSD's keyword: filed under storage, the words mean the full disk
               _incident(2, **full, title="sweep stops: the trials' checkpoints filled the local disk",
                         keywords=["no space left on device"]),
               # "diverged" is also a divergence's keyword: not of the storage layer
               _incident(3, **full, title="checkpoints piled up once save and eval steps diverged: disk full"),
               # the same words filed under another layer name neither: no key, no group
               _incident(4, symptom="crash", layer="unknown", title="local disk full during the sweep")]
    assert _groups(records) == [["INC-0001", "INC-0002", "INC-0003"], ["INC-0004"]]


def test_a_lost_gpu_and_a_spot_interruption_told_in_words_meet_their_mode() -> None:
    records = [_incident(1, symptom="crash", layer="gpu-hardware",
                         signatures=["Unable to determine the device handle for GPU 0000:1C:00.0: Unknown Error"]),
               _incident(2, symptom="infra", layer="gpu-hardware", title="after a reboot the node shows 7 of 8 GPUs",
                         keywords=["GPU missing after reboot"]),
               _incident(3, symptom="crash", layer="scheduler", title="Job preempted, restarted from its checkpoint"),
               _incident(4, symptom="infra", layer="scheduler", title="managed spot training restarts",
                         keywords=["spot interruption"]),
               _incident(5, symptom="infra", layer="scheduler", title="the node's jobs restart after a reboot")]
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003", "INC-0004"], ["INC-0005"]]


def test_the_work_a_watchdog_reports_timed_out_is_a_collective_timeout_not_an_unknown_error() -> None:
    line = "WorkNCCL(SeqNum=88, OpType=BROADCAST, NumelIn=4, NumelOut=4, Timeout(ms)=600000) ran for 600021 milliseconds before timing out."
    records = [_incident(1, symptom="crash", layer="unknown", signatures=[line]),
               _incident(2, symptom="crash", layer="unknown", signatures=[line.replace("88", "91")])]
    found, again = (identify(v) for v in incident_views(records))
    assert found.mode is not None and found.mode.id == "nccl.collective-timeout" and found.key[0] == "mode"
    assert again.key == found.key  # its numbers vary between occurrences


def test_a_record_naming_an_abort_and_the_timeout_behind_it_is_the_timeout() -> None:
    evaluation = dict(symptom="crash", layer="framework", scope="cluster", cluster="c")
    records = [_incident(1, **evaluation, title="evaluation on rank 0 outlasts the collective timeout: NCCL timeout",
                         keywords=["evaluation"]),
               _incident(2, **evaluation, title="DDP run aborts mid-validation with a broadcast timeout",
                         keywords=["SIGABRT", "validation"]),
               _incident(3, **evaluation, title="rank 3 aborted during evaluation", keywords=["SIGABRT"])]
    for record in records:
        record.data.pop("run")
    keys = [identify(v).key for v in incident_views(records)]
    assert keys[0] == keys[1] and keys[0][:2] == ("mode", "nccl.collective-timeout")
    assert keys[2][:2] == ("mode", "process.abort")  # an abort and nothing else said: the abort


def test_a_consequence_given_its_reason_is_the_reason() -> None:
    from tooling.catalogue.evidence import stated_cause
    records = [_incident(1, symptom="infra", layer="unknown", signatures=["job preempted (node failure)"]),
               _incident(2, symptom="crash", layer="scheduler", title="Runs hit by a node failure are requeued"),
               _incident(3, symptom="infra", layer="unknown", title="node gpu-1-9 went down"),
               _incident(4, symptom="crash", layer="scheduler", title="job preempted by a higher-priority job"),
               _incident(5, symptom="crash", layer="scheduler", signatures=["slurmstepd: error: *** JOB 7 CANCELLED "
                                                                           "AT 2026-11-05T10:00:00 DUE TO PREEMPTION ***"])]
    groups = _groups(records)
    assert ["INC-0001", "INC-0002", "INC-0003"] in groups and ["INC-0004", "INC-0005"] in groups
    # a parenthesis that lists several things gives no reason, and a reason needs a second failure named
    assert stated_cause("nodes come up dirty (bad GPU state, missing at rendezvous, hangs)") is None
    assert stated_cause("the run stopped (node failure)") is None
    assert stated_cause("preempted due to node failure").id == "node.unresponsive"  # type: ignore[union-attr]
    # a clause ends with its field (a title, one keyword): the next field is not part of the reason
    title, keyword = "jobs preempted due to node failure", "mails about preempted jobs"
    assert stated_cause(f"{title} {keyword}") is None
    assert stated_cause(title, keyword).id == "node.unresponsive"  # type: ignore[union-attr]
