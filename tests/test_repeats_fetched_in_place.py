"""Repeat grouping of a checkpoint that is not the checkpoint (heldout-repeats-11, issue 25), with made-up
incidents: what came in its place, a Git LFS pointer or a web page, is told by the byte pickle read first
or by the incident's words, and a bare "invalid load key" named with those words is the file fetched wrong,
not a write cut short. And a scheduler's name (ReduceLROnPlateau) is no loss plateau."""
from __future__ import annotations

from test_repeats import _groups, _incident
from tooling.analysis.identity import identify
from tooling.analysis.incidents import incident_views
from tooling.catalogue.evidence import described_mode

POINTER = "_pickle.UnpicklingError: invalid load key, 'v'."
PAGE = "_pickle.UnpicklingError: invalid load key, '<'."


def _crash(n: int, **fields: object):  # type: ignore[no-untyped-def]
    return _incident(n, symptom="crash", layer="unknown", **fields)


def test_a_git_lfs_pointer_and_a_web_page_in_the_checkpoints_place_are_two_failures() -> None:
    records = [_crash(1, signatures=[POINTER]),
               _crash(2, signatures=["Exception invalid load key, 'v'. when trying to execute <function load at 0x7f6>"]),
               _crash(3, signatures=[PAGE]),
               _crash(4, signatures=["invalid load key, '<'."], keywords=["gdown saved the HTML error page"]),
               _crash(5, title="torch.load fails", keywords=["the weights were never pulled: git lfs install, git lfs pull"],
                      signatures=["invalid load key, 'v'."])]
    assert _groups(records) == [["INC-0001", "INC-0002", "INC-0005"], ["INC-0003", "INC-0004"]]
    keys = [identify(v).key for v in incident_views(records)]
    assert keys[0] == ("mode", "checkpoint.not-the-file", "fetched=lfs-pointer")
    assert keys[2] == ("mode", "checkpoint.not-the-file", "fetched=web-page")


def test_the_bare_load_key_error_named_with_git_lfs_is_the_pointer_not_a_cut_write() -> None:
    lfs = _crash(1, title="invalid load key", keywords=["pre trained model from git lfs"])
    cut = _crash(2, title="invalid load key", keywords=["the node died while saving"])
    assert identify(incident_views([lfs])[0]).mode.id == "checkpoint.not-the-file"
    assert identify(incident_views([cut])[0]).mode.id == "checkpoint.partial-write"
    # a byte that is neither ('\x00' of a zeroed file) says nothing of what came in its place
    zeroed = _crash(3, signatures=["_pickle.UnpicklingError: invalid load key, '\\x00'."])
    assert identify(incident_views([zeroed])[0]).mode.id == "checkpoint.partial-write"


def test_a_scheduler_named_reduce_lr_on_plateau_names_no_plateau() -> None:
    scheduler = {"title": "`ReduceLROnPlateau._reduce_lr` triggers recompilation with tensor lr", "keywords": []}
    assert described_mode(scheduler)[0] is None
    stuck = {"title": "loss plateau after epoch 3", "keywords": []}
    assert described_mode(stuck)[0].id == "training.plateau"
