"""Failures heldout-repeats-8 showed the grouping could not tell apart or together (tests/corpus/
heldout-repeats-8/README.md): a file fetched in place of the checkpoint. Made-up records, each
with a look-alike that must stay apart."""
from __future__ import annotations

from test_repeats import _groups, _incident

from tooling.catalogue.recognise import recognise

CHECKPOINT = {"symptom": "checkpoint", "layer": "storage"}


def test_a_pointer_fetched_in_place_of_the_checkpoint_is_not_a_checkpoint_cut_short() -> None:
    assert recognise("_pickle.UnpicklingError: invalid load key, 'v'.").mode.id == "checkpoint.not-the-file"
    assert recognise("_pickle.UnpicklingError: invalid load key, '<'.").mode.id == "checkpoint.not-the-file"
    assert recognise("_pickle.UnpicklingError: invalid load key, '\\x00'.").mode.id == "checkpoint.partial-write"
    records = [
        _incident(1, signatures=["_pickle.UnpicklingError: invalid load key, 'v'."], **CHECKPOINT),
        _incident(2, title="Weights are 130-byte files: cloned without git lfs, git lfs pull fixed it", **CHECKPOINT),
        _incident(3, signatures=["RuntimeError: PytorchStreamReader failed reading zip archive: failed finding "
                                 "central directory"], **CHECKPOINT),
        _incident(4, signatures=["safetensors_rust.SafetensorError: Error while deserializing header: "
                                 "MetadataIncompleteBuffer"], **CHECKPOINT),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003", "INC-0004"]]
