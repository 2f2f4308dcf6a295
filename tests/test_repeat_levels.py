"""Repeats at two levels and suggestions at filing time (issue 25 items 3 and 4): made-up sets for
each mechanism, then both levels and the suggestions scored on every labelled corpus.

The "same automation" labels are derived only from labels that exist: a label names a failure
mode (``mode`` or ``mode/slug``), and the catalogue names that mode's automation; failures whose
automation only guides a person, and labels that name no mode of the catalogue, keep their own
label. Never from the tool's output."""
from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from support import PROJECT, tooling
from test_repeats import (HELDOUT, HELDOUT_2, HELDOUT_3, HELDOUT_4, HELDOUT_5, HELDOUT_6, HELDOUT_7, HELDOUT_8,
                          HELDOUT_9, HELDOUT_10, HELDOUT_11, HELDOUT_12, HELDOUT_13, HELDOUT_14, HELDOUT_15, HELDOUT_16,
                          HELDOUT_17, HELDOUT_18,
                          LABELLED, NOW, REALWORLD, _pairs, _truth)
from tooling.analysis import analyse
from tooling.analysis.incidents import incident_views
from tooling.analysis.levels import SAME_AUTOMATION, SAME_FAILURE
from tooling.analysis.repeats import earlier_repeats_of
from tooling.analysis.similarity import Index
from tooling.catalogue.automations import by_id
from tooling.catalogue.modes import catalogue
from tooling.messages import render
from tooling.records.model import Record
from tooling.rules.validate import validate


def _incident(n: int, *, day: int | None = None, **fields: Any) -> Record:
    data = {"kind": "incident", "id": f"INC-{n:04d}", "title": f"incident {n}", "run": "r", "status": "resolved",
            "severity": "sev2", "symptom": "crash", "layer": "unknown",
            "detected_at": f"2026-11-{day or n:02d}T10:00:00+00:00", **fields}
    return Record(f"incidents/INC-{n:04d}.yaml", data)


def _write(root: Path, records: list[Record]) -> Path:
    """The records as files of a repository: of a cluster, not a run, and still open."""
    (root / "incidents").mkdir()
    for r in records:
        data = {k: v for k, v in r.data.items() if k != "run"} | {"status": "open", "scope": "cluster", "cluster": "c"}
        (root / r.path).write_text(json.dumps(data))
    return root


def _levels(records: list[Record]) -> dict[tuple[str, ...], tuple[str, list[list[str]], str]]:
    """Candidate incidents -> (level, its failures, automation id)."""
    return {tuple(v.id for v in c.incidents): (c.level, [[v.id for v in f] for f in c.failures], c.automation.id)
            for c in analyse(records, now=NOW).candidates}


def test_two_divergences_of_different_causes_are_two_failures_but_one_automation() -> None:
    records = [_incident(1, symptom="divergence", layer="training-dynamics", failure_mode="training.divergence",
                         signatures=["loss diverged at step 1200 after the data mix switched to code shards"]),
               _incident(2, symptom="loss-spike", layer="training-dynamics",
                         title="loss spiked at step 9000 and came back"),
               _incident(3, symptom="crash", layer="scheduler", failure_mode="scheduler.preemption"),
               _incident(4, symptom="crash", layer="scheduler", failure_mode="scheduler.preemption")]
    found = _levels(records)
    # a loss spike no mode names still joins: the rollback reacts to the symptom itself
    assert found[("INC-0001", "INC-0002")] == (SAME_AUTOMATION, [["INC-0001"], ["INC-0002"]], "divergence-rollback")
    assert found[("INC-0003", "INC-0004")] == (SAME_FAILURE, [["INC-0003", "INC-0004"]], "preemption-auto-resume")
    strict = [[v.id for v in g.incidents] for g in analyse(records, now=NOW).groups]
    assert ["INC-0001"] in strict and ["INC-0002"] in strict  # the strict level keeps them apart


def test_a_failure_only_a_runbook_handles_joins_nothing_and_a_guess_from_the_layer_joins_nothing() -> None:
    segfault = ["Segmentation fault (core dumped) in the fused optimizer kernel"]
    records = [_incident(1, failure_mode="process.segfault", signatures=segfault),
               _incident(2, failure_mode="cuda.oom"),
               _incident(3, layer="framework", title="a deprecated argument was ignored"),  # preflight by layer only
               _incident(4, layer="framework", title="the optimizer state was not saved")]
    assert _levels(records) == {}  # four failures seen once each, none joined


def test_a_hang_filed_outside_the_layers_of_its_modes_pre_flight_is_the_watchdogs() -> None:
    acs = {"failure_mode": "host.pcie-p2p-blocked", "symptom": "hang", "layer": "host"}
    timeout = _incident(3, failure_mode="nccl.collective-timeout", symptom="hang", layer="nccl")
    mismatch = _incident(3, failure_mode="driver.version-mismatch", symptom="crash", layer="driver")
    for layer in ("host", "unknown"):  # filed under another layer, or under none
        hangs = [_incident(1, **acs | {"layer": layer}), _incident(2, **acs | {"layer": layer}), timeout]
        assert _levels(hangs)[("INC-0001", "INC-0002", "INC-0003")] == (
            SAME_AUTOMATION, [["INC-0001", "INC-0002"], ["INC-0003"]], "collective-hang-watchdog")
    # no symptom a handler reacts to, or filed under the pre-flight's own layers: the pre-flight's
    for other in ({"symptom": "crash"}, {"layer": "driver"}):
        found = _levels([_incident(1, **acs | other), _incident(2, **acs | other), mismatch])
        assert found[("INC-0001", "INC-0002", "INC-0003")][2] == "preflight-versions"


def test_a_hang_read_as_the_abort_that_ended_it_is_the_watchdogs() -> None:
    timeout = _incident(1, failure_mode="nccl.collective-timeout", symptom="hang", layer="nccl")
    abort = {"failure_mode": "process.abort", "layer": "unknown", "signatures": ["Aborted (core dumped)"]}
    hung = [timeout, _incident(2, symptom="hang", **abort)]
    assert _levels(hung) == {("INC-0001", "INC-0002"): (
        SAME_AUTOMATION, [["INC-0001"], ["INC-0002"]], "collective-hang-watchdog")}
    # aborts with no symptom a handler reacts to: a person's, their own failure
    crashed = [timeout, _incident(2, symptom="crash", **abort), _incident(3, symptom="crash", **abort)]
    assert _levels(crashed) == {("INC-0002", "INC-0003"): (SAME_FAILURE, [["INC-0002", "INC-0003"]], "runbook-first")}


def test_a_hang_nobody_diagnosed_is_the_watchdogs_whatever_its_layer() -> None:
    timeout = _incident(1, failure_mode="nccl.collective-timeout", symptom="hang", layer="nccl")
    records = [timeout, _incident(2, symptom="hang", layer="unknown", title="training hangs after several epochs"),
               _incident(3, symptom="hang", layer="framework", title="DDP run stuck in epoch 5, GPUs at 100%"),
               _incident(4, symptom="hang", layer="unknown", title="stuck after saving a checkpoint"),
               _incident(5, symptom="hang", layer="unknown", title="nodes come up with a bad GPU state, rendezvous fails")]
    # the save's hang is the save's to handle; a hang whose words name causes is no longer undiagnosed
    assert _levels(records) == {("INC-0001", "INC-0002", "INC-0003"): (
        SAME_AUTOMATION, [["INC-0001"], ["INC-0002"], ["INC-0003"]], "collective-hang-watchdog")}


def test_the_level_and_the_failures_in_repeats_json(tmp_path: Path) -> None:
    _write(tmp_path, [_incident(n, layer="storage", symptom="checkpoint", failure_mode=mode)
                      for n, mode in ((1, "storage.quota"), (2, "storage.inode-exhaustion"), (3, "storage.quota"))])
    result = tooling("repeats", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    [candidate] = json.loads(result.stdout)["candidates"]
    assert candidate["level"] == "same automation" and candidate["occurrences"] == 3
    assert candidate["failures"] == [["INC-0001", "INC-0003"], ["INC-0002"]]
    assert candidate["automation"]["id"] == "storage-capacity-guard"
    # the automation the failures share, then why the quota incidents are one failure
    assert candidate["reason"] == ("2 failures the same automation would have handled: storage.quota, "
                                   "storage.inode-exhaustion; failure mode storage.quota")


# -- suggestions at filing time: each with its reason, in one line

def _suggested(records: list[Record], target: str) -> list[tuple[str, str]]:
    views = incident_views(records)
    found = earlier_repeats_of(next(v for v in views if v.id == target), views, Index(views))
    return [(i, render(why)) for i, why in found]


def test_a_suggestion_says_why_in_one_line() -> None:
    xid = ["NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python, GPU has fallen off the bus."]
    records = [_incident(1, signatures=xid, layer="gpu-hardware"),
               _incident(2, title="tokenizer worker hung on a corrupt shard", symptom="hang"),
               _incident(3, title="rank 7 crashed",
                         signatures=[xid[0].replace("3b", "af").replace("4242", "17")]),
               _incident(4, title="tokenizer worker hung on a corrupt shard in epoch 3", symptom="hang")]
    assert _suggested(records, "INC-0003")[0] == ("INC-0001", "same failure mode gpu.fell-off-bus")
    [(other, why)] = _suggested(records, "INC-0004")
    assert other == "INC-0002" and why.startswith("similar wording (") and "\n" not in why
    stated = _suggested([*records, _incident(5, title="the tokenizer hang happened again", symptom="hang")], "INC-0005")
    assert stated[0][0] == "INC-0004" and stated[0][1].startswith("the record says it happened before ('again")


def test_only_earlier_incidents_are_suggested(tmp_path: Path) -> None:
    xid = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus."
    records = [_incident(n, signatures=[xid], layer="gpu-hardware") for n in (1, 2, 3)]
    assert [i for i, _ in _suggested(records, "INC-0001")] == []
    assert [i for i, _ in _suggested(records, "INC-0003")] == ["INC-0002", "INC-0001"]
    _write(tmp_path, records)
    result = tooling("repeats", "--for", "INC-0002", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout == "INC-0001  same failure mode gpu.fell-off-bus: incident 1\n"
    missing = tooling("repeats", "--for", "INC-0404", cwd=tmp_path)
    assert missing.returncode == 1 and "--for: no incident 'INC-0404' in this repository" in missing.stderr
    empty = tooling("repeats", "--for", "", cwd=tmp_path)  # not the whole ranking in silence
    assert empty.returncode == 1 and empty.stderr == ("tooling: error: --for: no incident '' in this repository; "
                                                      "expected an id such as 'INC-0001'\n")


# -- both levels and the suggestions on every labelled corpus

def automation_label(label: str) -> str:
    """The "same automation" label derived from a "same failure" label: its mode's automation in
    the catalogue; the label itself where no mode is named or the automation only guides a person."""
    mode = catalogue().get(label.split("/")[0])
    automation = by_id(mode.automation) if mode is not None else None
    return label if automation is None or automation.implementation is None else f"automation:{automation.id}"


def _f1(found: set[tuple[str, str]], truth: set[tuple[str, str]]) -> tuple[float, float, float]:
    hits = len(found & truth)
    precision, recall = (hits / len(found) if found else 1.0), (hits / len(truth) if truth else 1.0)
    return precision, recall, 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _corpus(corpus: Path) -> tuple[list[Record], dict[str, str]]:
    folders = [f for f in (corpus / "incidents", corpus / "runbooks") if f.is_dir()]
    report = validate(folders, root=corpus, now=NOW)
    assert not report.errors, report.errors[:3]
    return report.records, {i: label for label, ids in _truth(corpus).items() for i in ids}


def _groups(labels: dict[str, str]) -> list[list[str]]:
    groups: dict[str, list[str]] = {}
    for incident, label in labels.items():
        groups.setdefault(label, []).append(incident)
    return list(groups.values())


# (corpus, "same failure" F1 floor, "same automation" F1 floor or None where no label names a mode).
# The targets are 0.8 and 0.9; where a corpus is below, the floor is what it reaches today
# (tests/corpus/README.md, "Two levels", says why), so that a change that loses ground fails.
# heldout-repeats-3 scored F1 0.557 and 0.611 at first sight (its README says why so low); its floors are
# what the general fixes it showed reach. heldout-repeats-4 scored 0.609 and 0.539 at first sight (its README);
# the floors are what the general fixes after it reach on every set (tests/corpus/README.md).
# heldout-repeats-5 scored 0.219 and 0.376 at first sight (its README); its floors, and realworld's
# automation floor, are what the general fixes after it reach. heldout-repeats-6 scored 0.339 and 0.393 at first
# sight (its README); its floors, and heldout-repeats' (which labels its tokenizing timeout too), are what the
# general fixes after it reach. heldout-repeats-7 scored 0.521 and 0.765 at first sight (its README); its
# floors are what the general fixes after it reach. heldout-repeats-8 scored 0.522 and 0.784 at first sight (its
# README); its floors are what the general fixes after it reach. heldout-repeats-9 scored 0.185 and 0.844 at first
# sight (its README); its floors are a little under what the general fixes after it reach. heldout-repeats-10 scored
# 0.267 and 0.860 at first sight (its README); its floors are a little under what the general fixes after it reach.
# heldout-repeats-11 scored 0.459 and 0.418 at first sight (its README); its floors are a little under what the
# general fixes after it reach. heldout-repeats-12 scored 0.156 and 0.937 at first sight (its README); its floors
# are a little under what the general fixes after it reach. heldout-repeats-13 scored 0.190 and 0.559 at first sight
# (its README); its floors are a little under what the general fixes after it reach. heldout-repeats-14 scored 0.132
# and 0.161 at first sight (its README); its floors are a little under what the general fixes after it reach.
# heldout-repeats-15 scored 0.062 and 0.374 at first sight (its README); its floors are a little under what the general
# fixes after it reach.
# heldout-repeats-16 scored 0.036 and 0.353 at first sight (its README); its floors are a little under what the general
# fixes after it reach.
# heldout-repeats-17 scored 0.165 and 0.808 at first sight (its README); its floors are a little under what the general
# fixes after it reach.
# heldout-repeats-18 scored 0.346 and 0.849 at first sight (its README); its floors are a little under what the general
# fixes after it reach.
LEVELS = [(LABELLED, 0.93, None), (REALWORLD, 0.93, 0.84), (HELDOUT, 0.81, 0.87), (HELDOUT_2, 0.73, 0.90),
          (HELDOUT_3, 0.82, 0.84), (HELDOUT_4, 0.77, 0.77),
          (HELDOUT_5, 0.75, 0.84), (HELDOUT_6, 0.77, 0.65), (HELDOUT_7, 0.95, 0.92), (HELDOUT_8, 0.77, 0.92),
          (HELDOUT_9, 0.85, 0.96), (HELDOUT_10, 0.30, 0.85), (HELDOUT_11, 0.59, 0.48), (HELDOUT_12, 0.37, 0.93),
          (HELDOUT_13, 0.42, 0.58), (HELDOUT_14, 0.66, 0.71), (HELDOUT_15, 0.39, 0.51), (HELDOUT_16, 0.71, 0.69),
          (HELDOUT_17, 0.48, 0.89), (HELDOUT_18, 0.66, 0.97)]


@pytest.mark.parametrize("corpus, failure_floor, automation_floor", LEVELS, ids=[c[0].name for c in LEVELS])
def test_both_levels_on_a_labelled_corpus(corpus: Path, failure_floor: float, automation_floor: float | None) -> None:
    records, labels = _corpus(corpus)
    analysis = analyse(records, now=NOW)
    failure = _f1(_pairs([[v.id for v in g.incidents] for g in analysis.groups]), _pairs(_groups(labels)))
    derived = {i: automation_label(label) for i, label in labels.items()}
    automation = _f1(_pairs([[v.id for v in f.incidents] for f in analysis.families]), _pairs(_groups(derived)))
    print(f"\n{corpus.name}: same failure P/R/F1 {failure[0]:.3f} / {failure[1]:.3f} / {failure[2]:.3f}; "
          f"same automation {automation[0]:.3f} / {automation[1]:.3f} / {automation[2]:.3f}")
    assert failure[2] >= failure_floor
    if automation_floor is None:  # its labels are names of its own, none a mode of the catalogue
        assert derived == labels
    else:
        assert automation[2] >= automation_floor


# (corpus, recall at 3 floor, precision of the first suggestion floor): the target is recall 0.8.
FILING = [(LABELLED, 0.95, 0.92), (REALWORLD, 0.9, 0.62), (HELDOUT, 0.87, 0.69), (HELDOUT_2, 0.9, 0.7),
          (HELDOUT_3, 0.96, 0.62), (HELDOUT_4, 0.82, 0.51),
          (HELDOUT_5, 0.9, 0.59), (HELDOUT_6, 1.0, 0.65), (HELDOUT_7, 0.96, 0.86), (HELDOUT_8, 1.0, 0.85),
          (HELDOUT_9, 0.98, 0.65), (HELDOUT_10, 0.92, 0.24), (HELDOUT_11, 0.88, 0.36), (HELDOUT_12, 0.76, 0.34),
          (HELDOUT_13, 0.8, 0.49), (HELDOUT_14, 0.82, 0.56), (HELDOUT_15, 0.59, 0.35), (HELDOUT_16, 0.78, 0.53),
          (HELDOUT_17, 0.8, 0.4), (HELDOUT_18, 0.96, 0.58)]
# heldout-repeats-3: 19 of 25, 17 of 31 at first sight; 24 of 25, 22 of 35 now.
# heldout-repeats-4: 14 of 17, 14 of 27 at first sight (its README).
# heldout-repeats-5: 12 of 22, 9 of 25 at first sight; 20 of 22, 18 of 30 now (its README).
# heldout-repeats-6: 12 of 18, 11 of 22 at first sight; 18 of 18, 17 of 26 now (its README).
# heldout-repeats-7: 28 of 33, 25 of 34 at first sight; 32 of 33, 32 of 37 now (its README).
# heldout-repeats-8: 29 of 30, 22 of 35 at first sight; 30 of 30, 29 of 34 now (its README).
# heldout-repeats-9: 21 of 26, 19 of 33 at first sight; 26 of 26, 24 of 36 now (its README).
# heldout-repeats-10: 12 of 13, 6 of 32 at first sight; 12 of 13, 8 of 32 now (its README).
# heldout-repeats-11: 14 of 17, 10 of 30 at first sight; 15 of 17, 11 of 30 now (its README).
# heldout-repeats-12: 6 of 13, 4 of 31 at first sight; 10 of 13, 10 of 29 now (its README).
# heldout-repeats-13: 9 of 15, 6 of 27 at first sight; 12 of 15, 11 of 22 now (its README).
# heldout-repeats-14: 17 of 25, 15 of 32 at first sight; 21 of 25, 21 of 36 now (its README).
# heldout-repeats-15: 2 of 15, 2 of 25 at first sight; 9 of 15, 9 of 25 now (its README).
# heldout-repeats-16: 7 of 20, 7 of 23 at first sight; 16 of 20, 16 of 29 now (its README).
# heldout-repeats-17: 9 of 22, 5 of 37 at first sight; 18 of 22, 15 of 36 now (its README).
# heldout-repeats-18: 18 of 25, 13 of 36 at first sight; 25 of 25, 23 of 38 now (its README).


@pytest.mark.parametrize("corpus, recall_floor, precision_floor", FILING, ids=[c[0].name for c in FILING])
def test_suggestions_at_filing_time_on_a_labelled_corpus(corpus: Path, recall_floor: float,
                                                         precision_floor: float) -> None:
    """Each incident filed in detection order into a repository of the incidents before it, as
    `tooling new-incident` files it (no repeat_of yet): is an earlier incident of its label among
    the first three suggested, and is the first suggestion one?"""
    records, labels = _corpus(corpus)
    others = [r for r in records if r.kind != "incident"]
    order = [v.id for v in incident_views(records)]
    by_id_ = {r.id: r for r in records if r.kind == "incident"}
    found = targets = shown = first = 0
    for n, incident in enumerate(order):
        filed = dataclasses.replace(by_id_[incident], data={k: v for k, v in by_id_[incident].data.items()
                                                             if k not in ("repeat_of", "not_repeat_of")})
        suggested = [i for i, _ in _suggested([*others, *(by_id_[i] for i in order[:n]), filed], incident)]
        same = {i for i in order[:n] if labels[i] == labels[incident]}
        shown, first = shown + bool(suggested), first + (bool(suggested) and suggested[0] in same)
        targets, found = targets + bool(same), found + bool(same & set(suggested))
    recall, precision = found / targets, first / max(shown, 1)
    print(f"\n{corpus.name}: recall at 3 {recall:.3f} ({found} of {targets}), precision of the first "
          f"{precision:.3f} ({first} of {shown})")
    assert recall >= recall_floor and precision >= precision_floor


def test_the_bundled_candidates_say_their_level() -> None:
    result = tooling("repeats", "--json", cwd=PROJECT)
    levels = {c["level"] for c in json.loads(result.stdout)["candidates"]}
    assert levels == {SAME_FAILURE, SAME_AUTOMATION}
