"""Repeat incidents: normalised signatures, grouping, the automation catalogue and its state."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
import yaml

from support import CORPUS, PROJECT, tooling
from tooling.analysis import analyse
from tooling.analysis.identity import identify
from tooling.analysis.repeats import group_ids, groups_of
from tooling.analysis.stated import stated_phrase
from tooling.catalogue.automations import suggest
from tooling.catalogue.modes import catalogue
from tooling.catalogue.recognise import affirmed, suggest as suggest_modes
from tooling.catalogue.signatures import looks_like_an_error, normalise
from tooling.messages import render
from tooling.records.model import Record
from tooling.rules.validate import validate

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)


@pytest.mark.parametrize("a, b", [
    ("NCCL WARN Timeout at work 8812 on node017", "NCCL WARN Timeout at work 12 on node203"),
    ("NVRM: Xid (PCI:0000:ca:00): 79, pid=1234, name=python", "NVRM: Xid (PCI:0000:4b:00): 79, pid=99, name=python"),
    ("[Rank 17] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8812)",
     "[Rank 203] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4)"),
    ("OSError: [Errno 28] No space left on device: '/shared/ckpt/step_1200/rank_03.pt'",
     "OSError: [Errno 28] No space left on device: '/nfs/run7/latest'"),
    ("2026-11-02T03:14:00Z illegal memory access at 0x7f3a2c001000 on 10.0.0.12",
     "2026-10-01T23:59:59+02:00 illegal memory access at 0x55d1 on 10.8.1.3"),
    ("[ 5123.337] mlx5_core 0000:c1:00.0 ibp193s0: Link down", "[ 12.000001] mlx5_core 0000:4b:00.1 ibp75s0: Link down"),
    # a run's directory relative to where it was launched is as much noise as an absolute one
    ("ValueError: Can't find a valid checkpoint at ./checkpoints/Video-LLaVA-Pretrain-7B/checkpoint-1500",
     "ValueError: Can't find a valid checkpoint at /finetune-sft/outputs-sft-v2/checkpoint-32500"),
    ("FileNotFoundError: ../data/train/shard_0007.tar", "FileNotFoundError: /mnt/data/train/shard_0001.tar"),
])
def test_noise_does_not_change_the_fingerprint(a: str, b: str) -> None:
    assert normalise(a) == normalise(b)


@pytest.mark.parametrize("a, b", [
    ("Xid 79", "Xid 63"),
    ("NVRM: Xid (PCI:0000:ca:00): 79, pid=1", "NVRM: Xid (PCI:0000:ca:00): 64, pid=1"),
    ("OSError: [Errno 28] No space left", "OSError: [Errno 122] No space left"),
    ("exited with exit code 137", "exited with exit code 1"),
    ("killed by signal 9", "killed by signal 15"),
])
def test_error_codes_are_kept(a: str, b: str) -> None:
    assert normalise(a) != normalise(b)


def _incident(n: int, **fields: Any) -> Record:
    data = {"kind": "incident", "id": f"INC-{n:04d}", "title": f"incident {n}", "run": "r", "status": "resolved",
            "severity": "sev2", "symptom": "hang", "layer": "nccl",
            "detected_at": f"2026-11-{n:02d}T10:00:00+00:00", **fields}
    return Record(f"incidents/INC-{n:04d}.yaml", data)


def _groups(records: list[Record]) -> list[list[str]]:
    return [[v.id for v in g] for g in group_ids(analyse(records, now=NOW).incidents)]


def test_one_failure_mode_groups_whatever_the_layer_and_the_line_shape() -> None:
    records = [
        _incident(1, signatures=["NVRM: Xid (PCI:0000:ca:00): 64, pid=1846221, name=python, Row Remapper"],
                  layer="gpu-hardware"),
        _incident(2, signatures=["Xid 63"], layer="unknown"),  # not diagnosed yet: still the same failure
        _incident(3, signatures=["RuntimeError: CUDA error: uncorrectable ECC error encountered"], symptom="crash"),
        _incident(4, signatures=["cudaErrorECCUncorrectable"], layer="framework"),
        _incident(5, keywords=["ecc errors again on node042"]),  # a description that names one cause
        _incident(6, keywords=["lm loss spike"]),  # a generic paraphrase names no failure: alone
        _incident(7, keywords=["lm loss spike, recovered after 300 steps"]),
        _incident(8, keywords=["lm loss spike that never recovered; diverged"]),
        _incident(9, keywords=["another spike, came back by itself"]),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002", "INC-0003", "INC-0004", "INC-0005"], ["INC-0006"],
                                ["INC-0007", "INC-0009"], ["INC-0008"]]


def test_an_exception_prefix_does_not_split_and_different_bugs_do_not_merge() -> None:
    records = [
        _incident(1, signatures=["AssertionError: expected the same number of micro-batches on every stage"]),
        _incident(2, signatures=["[rank3]: expected the same number of micro-batches on every stage"]),
        _incident(3, signatures=["RuntimeError: Expected all tensors to be on the same device"]),
        _incident(4, signatures=["RuntimeError: shape '[4, 1024]' is invalid for input of size 2048"]),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003"], ["INC-0004"]]


def test_no_chaining_through_an_incident_with_two_failures_and_people_win() -> None:
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    full = "OSError: [Errno 28] No space left on device: '/ckpt/latest'"
    records = [
        _incident(1, signatures=[oom]),
        _incident(2, signatures=[full, oom]),  # primary failure: the first one it shows
        _incident(3, signatures=[full]),
        _incident(4, signatures=[oom], not_repeat_of=["INC-0001"]),  # a person checked: not the same
        _incident(5, repeat_of="INC-0001"),  # no signature: the link alone groups it
    ]
    assert _groups(records) == [["INC-0001", "INC-0005"], ["INC-0002", "INC-0003"], ["INC-0004"]]


def _reasons(records: list[Record]) -> dict[tuple[str, ...], str]:
    return {tuple(v.id for v in g.incidents): render(g.explanation)
            for g in groups_of(analyse(records, now=NOW).incidents) if len(g.incidents) > 1}


def test_a_record_that_says_its_failure_is_back_repeats_the_latest_one_of_its_place() -> None:
    diverged = {"symptom": "divergence", "layer": "training-dynamics"}
    records = [
        _incident(1, title="lm loss jumped from 6.4 to 14, later flat", **diverged),  # names no mode
        _incident(2, title="Diverged again at the end of warm-up", **diverged, run="other"),  # another run
        _incident(3, title="The same glitch, even sooner after reseeding", **diverged),
        _incident(4, title="Failed in a very similar way with beta2=0.95", **diverged),
        _incident(5, title="Back to training again after the rollback; restarted again from step 1200",
                  **diverged, run="other"),  # what the run and people did next
        _incident(6, signatures=["NVRM: Xid (PCI:0000:ca:00): 79, pid=1, GPU has fallen off the bus"]),
        _incident(7, title="Xid 48 again", signatures=["NVRM: Xid (PCI:0000:4b:00): 48, pid=2, DBE"]),  # codes differ
        _incident(8, title="NCCL hang again", symptom="hang", not_repeat_of=["INC-0007"]),  # a person said no
        _incident(9, title="장애 재발: 같은 증상", **diverged),  # Korean: "the failure recurred, the same symptom"
        _incident(10, title="A divergence never seen before", **diverged, run="other"),  # says the opposite
    ]
    assert _groups(records) == [["INC-0001", "INC-0003", "INC-0004", "INC-0009"], ["INC-0002"], ["INC-0005"],
                                ["INC-0006"], ["INC-0007"], ["INC-0008"], ["INC-0010"]]
    assert _reasons(records) == {("INC-0001", "INC-0003", "INC-0004", "INC-0009"): (
        "the record says it happened before ('the same glitch'); the record says it happened before "
        "('very similar'); the record says it happened before ('재발')")}


def test_a_failure_that_persists_is_said_to_be_back_and_a_nan_may_follow_a_divergence() -> None:
    loss = {"layer": "training-dynamics", "run": "glm"}
    records = [
        _incident(1, title="Loss jumps after the data switch at step 22800", symptom="divergence", **loss),
        _incident(2, title="Loss goes NaN two hours after the rollback", symptom="nan", **loss),  # says nothing more
        _incident(3, title="Skipped 500 steps of data, the loss still diverges", symptom="divergence", **loss),
        _incident(4, title="NaN again after the second rollback", symptom="nan", **loss),
        _incident(5, title="Still running at step 30000", symptom="divergence", **loss),  # no failure persists
        _incident(6, title="Training keeps crashing on node 7", symptom="crash", run="other"),  # nothing before it
    ]
    assert _groups(records) == [["INC-0001"], ["INC-0002", "INC-0003", "INC-0004"], ["INC-0005"], ["INC-0006"]]


@pytest.mark.parametrize("text, phrase", [
    ("BNB experiment 6 diverged too", "diverged too"), ("The second attempt failed too", "failed too"),
    ("It also crashed on the new image", "also crashed"), ("NaNs after every restart", "every restart"),
    ("Stops learning, only later each time", "each time"), ("이번에도 매번 발산", "매번"),
    ("Preemptions happen too often", None), ("It crashed too early to tell", None), ("Loss too high", None),
    ("Rolled back to 34000 and LR halved once more", None), ("Rolled back again, data reshuffled", None),
    ("Hung in the all-reduce again", "again"), ("Diverging once more", "once more")])
def test_a_failure_that_struck_another_attempt_too_is_said_to_be_back(text: str, phrase: str | None) -> None:
    assert stated_phrase({"title": text}) == phrase


def test_a_stated_repeat_means_the_latest_of_its_failure_there() -> None:
    loss = {"symptom": "divergence", "layer": "training-dynamics", "run": "opt"}
    grad_nan = "RuntimeError: Rank 3: found NaN in local grad norm in backward pass before data-parallel communication"
    crash = {"symptom": "crash", "layer": "hardware", "run": "opt"}
    records = [
        _incident(1, title="Loss diverged at 14k; LR lowered", failure_mode="training.divergence", **loss),
        _incident(2, title="Grad norm and activation norm start to drift upward", **loss),  # no cause found
        _incident(3, title="This happened again: perplexity diverged after grad norm spikes", **loss),
        _incident(4, title="NaN in the grad norm", **{**loss, "symptom": "nan"}, signatures=[grad_nan]),
        _incident(5, title="Loss spike, rolled back", **loss),
        _incident(6, title="NaN in the grad norm again", **{**loss, "symptom": "nan"}, signatures=[grad_nan]),
        _incident(7, title="Restarts for ECC errors", **crash),
        _incident(8, title="Restarts for unspecified NCCL errors", **crash),  # no mode: another crash
        _incident(9, title="ECC errors again", **crash),
        _incident(10, title="Large loss spike that recovered on its own", **{**loss, "symptom": "loss-spike"}),
        _incident(11, title="Diverging again; restarted with reshuffled data", **loss),
    ]
    # 3 means the drift just before it, not the older divergence of its mode; 6 the NaN its key
    # already names, not the spike in between; 9 the ECC errors, not the crash of unknown cause;
    # 11 the divergence, not the spike between them that recovered
    assert _groups(records) == [["INC-0001"], ["INC-0002", "INC-0003"], ["INC-0004", "INC-0006", "INC-0011"],
                                ["INC-0005"], ["INC-0007", "INC-0009"], ["INC-0008"], ["INC-0010"]]


def test_an_error_quoted_among_the_words_names_its_mode() -> None:
    quoted = _incident(1, title="Dataloader workers crash at epoch 3", keywords=["received 0 items of ancdata"])
    # where the words already name another mode as much, the quote does not tip it
    both = _incident(2, title="Too many open files with 8 workers",
                     keywords=["unable to open shared memory object", "raise ulimit -n"])
    assert [identify(v).mode.id for v in analyse([quoted, both], now=NOW).incidents] == \
        ["host.too-many-open-files", "host.too-many-open-files"]


def test_a_clause_that_clears_something_names_no_failure() -> None:
    cleared = _incident(1, keywords=["exit code -7", "gpu and cpu memory looked fine", "no error text"])
    blamed = _incident(2, keywords=["killed (-9) during cpu offload"])
    assert [identify(analyse([r], now=NOW).incidents[0]).mode for r in (cleared, blamed)] == \
        [None, catalogue().get("host.oom-killed")]
    assert affirmed("host OOM was ruled out; NCCL timeout after 30 min, disk was not the issue") == \
        "; NCCL timeout after 30 min,"
    assert affirmed("no space left on device, node not responding") == "no space left on device, node not responding"


def test_a_record_that_names_the_incident_it_repeats_by_id_repeats_that_one() -> None:
    records = [
        _incident(1, title="NCCL hang in all-reduce", run="a"),
        _incident(2, title="NCCL hang in all-reduce", run="b"),
        _incident(3, title="Hung in the all-reduce again", notes="The same as INC-0001, on another node.", run="b"),
        _incident(4, title="Same hang as INC-0099", run="c"),  # no such incident: nothing to link to
        _incident(5, title="The same hang as INC-0006", run="d"),  # filed before the one it names
        _incident(6, title="NCCL hang in all-reduce", run="e"),
    ]
    assert _groups(records) == [["INC-0001", "INC-0003"], ["INC-0002"], ["INC-0004"], ["INC-0005", "INC-0006"]]


def test_error_lines_alike_but_for_a_word_are_one_failure() -> None:
    lr = "AnnealingLR: class input value 1e-05 and checkpointvalue 3e-05 for {} do not match"
    records = [
        _incident(1, signatures=[lr.format("learning rate")]),
        _incident(2, signatures=["AssertionError: " + lr.format("minimum learning rate")]),
        _incident(3, signatures=["NCCL error in: ProcessGroupNCCL.cpp:260, unhandled system error"]),
        _incident(4, signatures=["NCCL error in: ProcessGroupNCCL.cpp:260, unhandled cuda error"]),  # short: apart
    ]
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003"], ["INC-0004"]]
    assert _reasons(records) == {("INC-0001", "INC-0002"): (
        "errors alike but for a word: 'annealinglr class input value and checkpointvalue for learning rate not' "
        "and 'annealinglr class input value and checkpointvalue for minimum learning rate'")}


def test_a_record_of_a_recurring_problem_is_a_candidate_alone() -> None:
    (candidate,) = analyse([_incident(1, keywords=["node unresponsive"], occurrences=5,
                                      failure_mode="node.unresponsive")], now=NOW).candidates
    assert (candidate.occurrences, candidate.failure_mode, candidate.automation.id) == (5, "node.unresponsive",
                                                                                         "gpu-xid-drain")


@pytest.mark.parametrize(("text", "mode"), [
    ("two nodes broke down overnight", "node.unresponsive"),
    ("a node crashed at step 4000", "node.unresponsive"),
    ("the loss explodes after step 3000", "training.divergence"),
    ("rank killed (-9) under CPU offload", "host.oom-killed"),
    ("the hang went away with NCCL_P2P_DISABLE=1", "host.pcie-p2p-blocked"),
    ("disabling p2p fixed the deadlock", "host.pcie-p2p-blocked"),
    ("the barrier timed out while rank 0 tokenized", "nccl.collective-timeout"),
    ("multi-GPU training times out in NCCL at the end of an epoch", "nccl.collective-timeout"),
    ("leaked shared_memory objects after a killed run", "host.stale-shared-memory"),  # Python's module name
    ("shared_memory could not be created", "host.shared-memory"),
    ("training crashed: the CUDA driver version is insufficient", "driver.version-mismatch"),
    ("jobs fail on the insufficient NVIDIA driver of the old nodes", "driver.version-mismatch"),
    ("the other processes also hold memory on GPU 0", "cuda.ranks-on-gpu0"),
    ("seven processes on rank 0's GPU", "cuda.ranks-on-gpu0"),
    ("training fails with no kernel image available on the new cards", "software.dependency"),
])
def test_the_words_operators_use_name_the_failure(text: str, mode: str) -> None:
    assert [m.id for m in suggest_modes(text)][:1] == [mode]


@pytest.mark.parametrize("text", ["processes on GPUs 0 and 1 that the trainer was not given", "two ranks on gpu 3",
                                  "the driver was updated and the insufficient disk space fixed"])
def test_words_near_a_failure_that_name_none(text: str) -> None:
    assert [m.id for m in suggest_modes(text)][:1] not in (["cuda.ranks-on-gpu0"], ["driver.version-mismatch"])


def test_a_node_short_of_a_gpu_is_the_gpu_lost_not_the_node() -> None:
    records = [_incident(1, layer="unknown", symptom="infra", title="gpu-2-5 lists one GPU fewer than it has"),
               _incident(2, layer="unknown", symptom="infra", title="gpu-1-8 came back from a reboot one GPU short"),
               _incident(3, layer="unknown", symptom="infra", keywords=["node gpu-3-1 lost one of its GPUs"]),
               _incident(4, layer="unknown", symptom="infra", title="node gpu-1-9 went down, its jobs lost")]
    assert [g for g in _groups(records) if len(g) > 1] == [["INC-0001", "INC-0002", "INC-0003"]]
    assert [m.id for m in suggest_modes("the node lost a GPU")][:1] == ["gpu.fell-off-bus"]


def test_shared_memory_that_killed_runs_left_is_told_from_a_dev_shm_too_small() -> None:
    full = "NCCL WARN Call to posix_fallocate failed : No space left on device"
    records = [
        _incident(1, signatures=[full], keywords=["docker started without --shm-size"], run="a"),
        _incident(2, signatures=[full], keywords=["leaked shm segments of SIGKILLed jobs filled /dev/shm"], run="b"),
        _incident(3, keywords=["dataloader init hangs; shared memory not cleaned up after killed runs"], run="c"),
        _incident(4, keywords=["bus error in dataloader workers, /dev/shm is 64 MB in the container"], run="d"),
    ]
    assert _groups(records) == [["INC-0001", "INC-0004"], ["INC-0002", "INC-0003"]]


def test_catalogue_suggestions() -> None:
    assert suggest("gpu-hardware", "crash", ["nvrm: xid 79, gpu has fallen off the bus"]).id == "gpu-xid-drain"
    assert suggest("network-fabric", "hang", ["nccl warn timeout"]).id == "collective-hang-watchdog"
    assert suggest("scheduler", "crash", ["due to preemption"]).id == "preemption-auto-resume"
    assert suggest("storage", "crash", ["[errno 28] no space left on device"]).id == "storage-capacity-guard"
    assert suggest("model-code", "nan", ["loss is nan"]).id == "nan-guard"
    assert suggest("human-ops", "other", ["?"]).id == "runbook-first"


def _postmortem(items: list[dict[str, Any]]) -> Record:
    return Record("incidents/PM-0001.yaml", {"kind": "postmortem", "id": "PM-0001", "title": "t",
                                              "incidents": ["INC-0001"], "status": "reviewed", "summary": "s",
                                              "action_items": items})


@pytest.mark.parametrize("items, state", [
    ([], "not automated"),
    ([{"description": "d", "kind": "automate", "status": "open", "due": "2026-12-01"}], "automation planned"),
    ([{"description": "d", "kind": "automate", "status": "done", "done_on": "2026-11-20"}], "automated"),
    ([{"description": "d", "kind": "automate", "status": "done", "done_on": "2026-11-03"}], "automation not working"),
])
def test_automation_state(items: list[dict[str, Any]], state: str) -> None:
    sig = ["NCCL WARN Timeout at work 1 on node001"]
    records = [_incident(1, signatures=sig), _incident(5, signatures=sig), _incident(9, signatures=sig),
               _postmortem(items)]
    (candidate,) = analyse(records, now=NOW).candidates
    assert (candidate.occurrences, candidate.state) == (3, state)


def test_repeats_json_on_the_bundled_records() -> None:
    result = tooling("repeats", "--json", cwd=PROJECT)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    groups = {tuple(c["incidents"]): c for c in report["candidates"]}
    # the eval hang of INC-0014 is another failure, but the hang watchdog would have handled it too
    hang = groups[("INC-0004", "INC-0007", "INC-0014")]
    assert (hang["automation"]["id"], hang["level"]) == ("collective-hang-watchdog", "same automation")
    assert hang["failures"] == [["INC-0004", "INC-0007"], ["INC-0014"]] and hang["state"] == "automated"
    assert groups[("INC-0002", "INC-0011")]["automation"]["id"] == "gpu-xid-drain"
    assert groups[("INC-0002", "INC-0011")]["level"] == "same failure"
    # PM-0001 #6 (drain and swap on Xid 79) is the automation this failure calls for, in progress
    assert groups[("INC-0002", "INC-0011")]["state"] == "automation in progress"


def test_repeats_table_on_a_terminal_width() -> None:
    result = tooling("repeats", cwd=PROJECT, env={"COLUMNS": "200"})
    assert result.returncode == 0
    assert "Automation candidates" in result.stdout and "INC-0004, INC-0007, INC-0014" in result.stdout


LABELLED = CORPUS / "repeats"
REALWORLD = CORPUS / "realworld"
HELDOUT = CORPUS / "heldout-repeats"
HELDOUT_2 = CORPUS / "heldout-repeats-2"
HELDOUT_3 = CORPUS / "heldout-repeats-3"
HELDOUT_4 = CORPUS / "heldout-repeats-4"
HELDOUT_5 = CORPUS / "heldout-repeats-5"
HELDOUT_6 = CORPUS / "heldout-repeats-6"
HELDOUT_7 = CORPUS / "heldout-repeats-7"
HELDOUT_8 = CORPUS / "heldout-repeats-8"
HELDOUT_9 = CORPUS / "heldout-repeats-9"
HELDOUT_10 = CORPUS / "heldout-repeats-10"
HELDOUT_11 = CORPUS / "heldout-repeats-11"
HELDOUT_12 = CORPUS / "heldout-repeats-12"
HELDOUT_13 = CORPUS / "heldout-repeats-13"
HELDOUT_14 = CORPUS / "heldout-repeats-14"
HELDOUT_15 = CORPUS / "heldout-repeats-15"
HELDOUT_16 = CORPUS / "heldout-repeats-16"
HELDOUT_17 = CORPUS / "heldout-repeats-17"
HELDOUT_18 = CORPUS / "heldout-repeats-18"


def _pairs(groups: list[list[str]]) -> set[tuple[str, str]]:
    return {tuple(sorted(p)) for g in groups for p in combinations(g, 2)}  # type: ignore[misc]


def _truth(corpus: Path) -> dict[str, list[str]]:
    """label -> incidents, from labels.yaml (label: [ids]) or labels/*.yaml (id: label)."""
    if (corpus / "labels.yaml").exists():
        return yaml.safe_load((corpus / "labels.yaml").read_text())
    groups: dict[str, list[str]] = {}
    for part in sorted((corpus / "labels").glob("*.yaml")):
        for incident, label in yaml.safe_load(part.read_text()).items():
            groups.setdefault(label, []).append(incident)
    return groups


# (corpus, least incidents, least labels, precision floor, recall floor). The issue asks for 0.9 on
# both of realworld; the other floors are what the grouping reaches today (see each README for why
# not more), so that a change that loses ground fails here. heldout-repeats was labelled by someone who had
# not seen the tool's grouping, and scored 0.42 / 0.47 as it was (its README): the fixes it
# showed were made for the general case, so it is no longer unseen, only harder. heldout-repeats-2,
# labelled the same way from other sources later, scored 0.72 / 0.58 blind (its README). heldout-repeats-3,
# labelled the same way again, scored 0.515 / 0.607 blind; its floors are what the general fixes it showed
# reach (routine messages, records in words only: tests/corpus/README.md). heldout-repeats-4, labelled the
# same way from cluster trackers and threads no set cites, scored 0.700 / 0.538 blind (its README); its floors
# are what the general fixes after it reach. heldout-repeats-5 scored 0.250 / 0.195 blind (its README); its
# floors are what the general fixes after it reach. heldout-repeats-6 scored 0.500 / 0.256 blind (its README);
# floors are what the general fixes after it reach. heldout-repeats-7 scored 0.717 / 0.409 blind (its README);
# its floors are what the general fixes after it reach. heldout-repeats-8 scored 0.450 / 0.621 blind (its README);
# its floors are what the general fixes after it reach. heldout-repeats-9 scored 0.294 / 0.135 at first sight
# (its README); its floors are a little under what the general fixes after it reach. heldout-repeats-10 scored
# 0.204 / 0.385 at first sight (its README); its floors are a little under what the general fixes after it reach.
# heldout-repeats-11 scored 0.341 / 0.700 at first sight (its README); its floors are a little under what the
# general fixes after it reach. heldout-repeats-12 scored 0.088 / 0.722 at first sight (its README); its floors
# are a little under what the general fixes after it reach. heldout-repeats-13 scored 0.140 / 0.296 at first sight
# (its README); its floors are a little under what the general fixes after it reach. heldout-repeats-14 scored
# 1.000 / 0.071 at first sight (its README); its floors are a little under what the general fixes after it reach.
# heldout-repeats-15 scored 0.045 / 0.100 at first sight (its README); its floors are a little under what the general
# fixes after it reach.
# heldout-repeats-16 scored 0.200 / 0.020 at first sight (its README); its floors are a little under what the general
# fixes after it reach.
# heldout-repeats-17 scored 0.102 / 0.434 at first sight (its README); its floors are a little under what the general
# fixes after it reach.
# heldout-repeats-18 scored 0.220 / 0.810 at first sight (its README); its floors are a little under what the general
# fixes after it reach.
CORPORA = [(LABELLED, 60, 15, 0.99, 0.88), (REALWORLD, 150, 100, 0.95, 0.90), (HELDOUT, 60, 30, 0.80, 0.83),
           (HELDOUT_2, 50, 20, 0.78, 0.66), (HELDOUT_3, 45, 20, 0.75, 0.91),
           (HELDOUT_4, 45, 30, 0.82, 0.73), (HELDOUT_5, 45, 25, 0.66, 0.87),
           (HELDOUT_6, 45, 30, 0.72, 0.82), (HELDOUT_7, 45, 13, 0.94, 0.95),
           (HELDOUT_8, 45, 15, 0.85, 0.70), (HELDOUT_9, 45, 15, 0.75, 0.98),
           (HELDOUT_10, 40, 25, 0.21, 0.49), (HELDOUT_11, 40, 20, 0.45, 0.84),
           (HELDOUT_12, 39, 26, 0.25, 0.72),
           (HELDOUT_13, 43, 28, 0.45, 0.40), (HELDOUT_14, 43, 18, 0.88, 0.52),
           (HELDOUT_15, 41, 26, 0.36, 0.42), (HELDOUT_16, 39, 19, 0.74, 0.68),
           (HELDOUT_17, 43, 21, 0.36, 0.72), (HELDOUT_18, 43, 18, 0.50, 0.97)]


@pytest.mark.parametrize("corpus, incidents, labels, precision_floor, recall_floor", CORPORA,
                         ids=[c[0].name for c in CORPORA])
def test_grouping_precision_and_recall_on_a_labelled_corpus(corpus: Path, incidents: int, labels: int,
                                                          precision_floor: float, recall_floor: float) -> None:
    folders = [f for f in (corpus / "incidents", corpus / "runbooks") if f.is_dir()]
    report = validate(folders, root=corpus, now=NOW)
    assert not report.errors, report.errors[:3]
    truth_groups = _truth(corpus)
    truth = _pairs(list(truth_groups.values()))
    found = _pairs([[v.id for v in g] for g in group_ids(analyse(report.records, now=NOW).incidents)])
    true_positive = len(truth & found)
    precision = true_positive / len(found) if found else 1.0
    recall = true_positive / len(truth)
    count = sum(len(v) for v in truth_groups.values())
    print(f"\n{corpus.name}: {count} incidents in {len(truth_groups)} groups; pairwise precision "
          f"{precision:.3f}, recall {recall:.3f}")
    assert count == len([r for r in report.records if r.kind == "incident"]) >= incidents
    assert len(truth_groups) >= labels
    assert precision >= precision_floor and recall >= recall_floor


def test_a_build_without_the_gpus_architecture_is_one_failure_however_the_line_says_it() -> None:
    records = [
        _incident(1, signatures=["RuntimeError: CUDA error: no kernel image is available for execution on the device"]),
        _incident(2, signatures=["NVIDIA A100 with CUDA capability sm_80 is not compatible with the current PyTorch "
                                 "installation."]),
        _incident(3, signatures=["THCudaCheck FAIL file=x.cu line=66 error=209 : no kernel image is available for "
                                 "execution on the device"]),
        # dependencies still told apart by their exceptions where no CUDA error names them
        _incident(4, signatures=["ImportError: libcudart.so.11.0: cannot open shared object file"]),
        _incident(5, signatures=["ModuleNotFoundError: No module named 'flash_attn'"]),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002", "INC-0003"], ["INC-0004"], ["INC-0005"]]


def test_a_checkpoint_with_a_wrappers_prefix_is_one_failure_in_lines_and_in_words() -> None:
    mismatch = {"symptom": "checkpoint", "layer": "model-code"}
    records = [
        _incident(1, signatures=['unexpected key "module.encoder.conv1.weight" in state_dict'], **mismatch),
        _incident(2, title="Resume fails: every key of the state dict has one more module prefix", **mismatch),
        _incident(3, title="Mismatch in state_dict keys when the model was trained with DistributedDataParallel",
                  **mismatch),
        # another wrapper's prefix, and a mismatch no prefix explains: their own failures
        _incident(4, signatures=['Unexpected key(s) in state_dict: "_orig_mod.embed.weight"'], **mismatch),
        _incident(5, signatures=["size mismatch for lm_head.weight: copying a param with shape [32000, 4096]"],
                  **mismatch),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002", "INC-0003"], ["INC-0004"], ["INC-0005"]]


def test_a_driver_line_from_a_machine_without_a_gpu_is_not_the_old_driver_of_a_gpu_node() -> None:
    line = "RuntimeError: CUDA driver version is insufficient for CUDA runtime version"
    records = [_incident(1, signatures=[line], keywords=["driver 418 on the node, torch built for CUDA 11.8"]),
               _incident(2, signatures=[line], title="job sent to the CPU partition by mistake fails at start"),
               _incident(3, signatures=[line], keywords=["laptop with only an integrated Intel UHD GPU"]),
               _incident(4, title="training fails: the NVIDIA driver is too old for this build"),
               # a GPU node whose GPUs are not seen is no machine without a GPU
               _incident(5, signatures=[none := "RuntimeError: No CUDA GPUs are available"],
                         keywords=["no GPUs visible on gpu-3"]),
               _incident(6, signatures=[none], keywords=["cpu-only login node"])]
    assert _groups(records) == [["INC-0001", "INC-0004"], ["INC-0002", "INC-0003"], ["INC-0005"], ["INC-0006"]]


def test_a_sample_the_decoder_could_not_read_is_told_by_what_it_says_of_it() -> None:
    data = {"symptom": "data", "layer": "data"}
    records = [
        _incident(1, signatures=["OSError: image file is truncated (12 bytes not processed)"], **data),
        _incident(2, signatures=["OSError: image file is truncated"], **data),
        _incident(3, title="training breaks after a while: a truncated JPEG in the dataset", **data),
        _incident(4, signatures=["PIL.UnidentifiedImageError: cannot identify image file '/data/x.jpg'"], **data),
        _incident(5, signatures=["UnicodeDecodeError: 'utf-8' codec can't decode byte 0x8b in position 1: "
                                 "invalid start byte"], **data),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002", "INC-0003"], ["INC-0004"], ["INC-0005"]]


def test_a_line_that_says_it_cant_is_an_error_line_as_one_that_says_it_cannot() -> None:
    records = [
        _incident(1, signatures=["Can't find a valid checkpoint at {checkpoint_path}"]),
        _incident(2, signatures=["ValueError: Can't find a valid checkpoint at ./output/checkpoint-500"]),
        # a line that says what it can do is no error
        _incident(3, signatures=["Can find a valid checkpoint at {checkpoint_path}"]),
    ]
    assert looks_like_an_error("Can't find a valid checkpoint") and looks_like_an_error("can not open the file")
    assert not looks_like_an_error("Can find a valid checkpoint")
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003"]]
