"""`tooling scan` on raw logs it was not written from: real multi-line pastes of public issue
threads (tests/corpus/heldout/logs, labelled before the tool ran on them; RESULTS.md has the
first run of each sweep). Every failure a person would file from a line is drafted (two that no
line names are out of reach, below), a healthy log drafts nothing, and no draft is beyond the
labels but for the one the project accepts, below, for its stated reason."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from support import CORPUS
from tooling.logs.scan import scan_logs

LOGS = CORPUS / "heldout" / "logs"
LABELS: list[dict[str, Any]] = yaml.safe_load((LOGS / "labels.yaml").read_text("utf-8"))
NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
# The peer of a rank whose NCCL set-up failed sees the connection close: NCCL's remote error is a
# failure of its own in the catalogue (it is often the first sign of a link or a node going), so
# a paste of both nodes' output drafts it beside the failure that caused it.
ACCEPTED_EXTRAS = {"nccl-tests-4090-internal-error.log": {"nccl.remote-error"}}
# Failures no line of the log names, only the numbers or the silence between lines: a slowdown
# seen in step times alone, a hang seen as nothing printed before a person's Ctrl-C. A scanner
# that reads lines cannot file them; `tooling watch` (stalls, step times) is where they are seen.
OUT_OF_REACH = {"niftynet-iteration-slowdown.log": {"training.throughput-drop"},
                "rtd-action-hang-sigint.log": {"training.hang"}}


def _drafted(name: str) -> set[str]:
    return {d.mode.id for d in scan_logs([LOGS / name], now=NOW).drafts}


@pytest.mark.parametrize("label", LABELS, ids=[entry["file"] for entry in LABELS])
def test_a_held_out_log_drafts_what_a_person_would_file(label: dict[str, Any]) -> None:
    drafted, expected = _drafted(label["file"]), set(label["expect"])
    # a consequence a person files apart (a collective timeout after an OOM) is folded into its
    # cause when it follows within the time the line says it waited (tooling.logs.aftermath)
    required = expected - set(label.get("consequence") or {}) - OUT_OF_REACH.get(label["file"], set())
    assert required <= drafted, f"missed {sorted(required - drafted)}"
    assert drafted <= expected | ACCEPTED_EXTRAS.get(label["file"], set()), f"extra {sorted(drafted - expected)}"


def test_held_out_log_figures() -> None:
    found = sum(len(set(e["expect"]) & _drafted(e["file"])) for e in LABELS)
    extra = sum(len(_drafted(e["file"]) - set(e["expect"])) for e in LABELS)
    expected = sum(len(e["expect"]) for e in LABELS)
    healthy = [e["file"] for e in LABELS if not e["expect"]]
    print(f"\nheld-out logs: {len(LABELS)} ({len(healthy)} healthy); {found} of {expected} expected failures "
          f"drafted, {extra} extra drafts")
    assert len(LABELS) >= 35 and len(healthy) >= 9
    # all but those out of reach and ms-swift's timeout, folded into the OOM before it as its aftermath
    assert found >= expected - sum(map(len, OUT_OF_REACH.values())) - 1
    assert all(Path(LOGS / e["file"]).is_file() for e in LABELS)


# Raw-log sweeps, each scored once before any change for it (its RESULTS.md), then held here at
# what the tool does now: (failures, drafted, classified, most false drafts, healthy logs, most
# false drafts in healthy logs). A fix raises the floor; nothing may lower it.
SWEEPS = {
    # sweep 5, first sight: 12 failures, 5 drafted, 5 classified, 2 false drafts, 1 in a healthy log
    "heldout-3": (12, 12, 12, 0, 4, 0),
    # sweep 6, first sight: 16 failures, 12 drafted, 11 classified, 1 false draft, none in a healthy log
    "heldout-4": (16, 16, 16, 0, 5, 0),
    # sweep 7, first sight: 14 failures, 6 drafted, 6 classified, no false draft, none in a healthy log
    "heldout-5": (14, 14, 14, 0, 6, 0),
    # sweep 8, first sight: 14 failures, 12 drafted, 9 classified, 2 false drafts, 1 in each of two healthy logs
    "heldout-6": (14, 14, 12, 1, 6, 1),
    # sweep 9, first sight: 14 failures, 11 drafted, 10 classified, 1 false draft, in a healthy log
    "heldout-7": (14, 14, 14, 0, 6, 0),
    # sweep 10, first sight: 12 failures, 11 drafted, 10 classified, 2 false drafts, 1 in a healthy log
    "heldout-8": (12, 12, 12, 0, 5, 0),
    # sweep 11, first sight: 12 failures, 9 drafted, 9 classified, no false draft
    "heldout-9": (12, 11, 11, 0, 5, 0),
    # sweep 12, first sight: 13 failures, 7 drafted, 7 classified, no false draft
    "heldout-10": (13, 10, 10, 0, 6, 0),
    # sweep 13, first sight: 14 failures, 9 drafted, 8 classified, 1 false draft, none in a healthy log
    "heldout-11": (14, 12, 12, 0, 5, 0),
    # sweep 14, first sight: 13 failures, 9 drafted, 8 classified, no false draft
    "heldout-12": (13, 13, 13, 0, 6, 0),
    # sweep 15, first sight: 14 failures, 9 drafted, 6 classified, no false draft
    "heldout-13": (14, 10, 10, 0, 6, 0),
    # sweep 16, first sight: 13 failures, 6 drafted, 6 classified, 1 false draft, none in a healthy log
    # (drafted 8: verl's NCCL watchdog frames alone, as a failure no mode names: tooling.logs.frames)
    "heldout-14": (13, 8, 7, 1, 6, 0),
    # sweep 17, first sight: 13 failures, 9 drafted, 9 classified, 1 false draft, none in a healthy log
    # (Ray's exception naming its cause in parentheses read as one; a Ctrl-C's KeyboardInterrupt no bug)
    "heldout-15": (13, 10, 9, 0, 6, 0),
    # sweep 18, first sight: 12 failures, 8 drafted, 8 classified, no false draft
    # (Kubernetes' CrashLoopBackOff, a pod's row or its waiting reason, as a failed child)
    "heldout-16": (12, 9, 9, 0, 6, 0),
    # sweep 19, first sight: 15 failures, 12 drafted, 12 classified, no false draft
    # (the driver's GSP calls refused with NV_ERR_RESET_REQUIRED, no Xid, as gpu.gsp-error)
    "heldout-17": (15, 13, 13, 0, 6, 0),
    # sweep 20, first sight: 14 failures, 11 drafted, 10 classified, no false draft
    # (an object store's SlowDown after the client's retries as storage.io-error, Horovod shut down
    # by another rank as a failed child)
    "heldout-18": (14, 13, 12, 0, 6, 0),
    # sweep 21, first sight: 13 failures, 13 drafted, 9 classified, no false draft
    # (a TPU's HBM buffer allocation and torch_npu's 'NPU out of memory' as cuda.oom, numpy's short
    # write, 'N requested and 0 written', as storage.io-error)
    "heldout-19": (13, 13, 12, 0, 6, 0),
}


@pytest.mark.parametrize("folder", sorted(SWEEPS))
def test_a_sweep_keeps_its_score(folder: str) -> None:
    from sweeps import labels, score_log
    from tooling.writers.filing import as_json

    sweep = CORPUS / folder
    scores = [score_log(label, [as_json(d) for d in scan_logs([sweep / "logs" / label["file"]], now=NOW).drafts])
              for label in labels(sweep)]
    healthy = [s for s in scores if not s.failures]
    failures, drafted, classified, false, n_healthy, healthy_false = SWEEPS[folder]
    assert (sum(s.failures for s in scores), len(healthy)) == (failures, n_healthy)
    assert sum(s.drafted for s in scores) >= drafted
    assert sum(s.classified for s in scores) >= classified
    assert sum(len(s.false) for s in scores) <= false
    assert sum(len(s.false) for s in healthy) <= healthy_false
