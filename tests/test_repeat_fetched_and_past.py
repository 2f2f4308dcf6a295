"""Failures heldout-repeats-8 showed the grouping could not tell apart or together (tests/corpus/
heldout-repeats-8/README.md): a file fetched in place of the checkpoint, an InfiniBand status
written in words, inodes behind a full device, token ids past the embedding. Made-up records, each
with a look-alike that must stay apart."""
from __future__ import annotations

from test_repeats import _groups, _incident

from tooling.catalogue.codes import codes
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


def test_an_infiniband_status_is_the_same_by_its_number_its_name_or_its_words() -> None:
    for line in ("NCCL WARN NET/IB : Got completion from peer 10.0.0.2<4242> with status=12 opcode=0 len=0 "
                 "vendor err 129", "ib_mlx5_log.c:132  Transport retry count exceeded on mlx5_0:1/IB (synd 0x15)",
                 "UCX  ERROR Send completion with error on qp 0x10e55: transport retry counter exceeded syndrome 0x81",
                 "ibv_poll_cq returned IBV_WC_RETRY_EXC_ERR"):
        assert codes(line).ib == (12,), line
    assert codes("RNR retry counter exceeded").ib == () and codes("retrying the download, 3 retries").ib == ()
    network = {"symptom": "crash", "layer": "network-fabric"}
    records = [
        _incident(1, signatures=["ib_mlx5_log.c:132  Transport retry count exceeded on mlx5_0:1/IB"], **network),
        _incident(2, title="Transport retry count exceeded in the all-to-all past 10 processes", **network),
        _incident(3, signatures=["NCCL WARN NET/IB : Got completion from peer 10.0.0.2<4242> with status=4 "
                                 "opcode=0 len=0 vendor err 81"], **network),  # a local protection error
    ]
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003"]]


def test_no_space_left_where_the_inodes_ran_out_is_the_inodes() -> None:
    full = "OSError: [Errno 28] No space left on device"
    records = [
        _incident(1, signatures=[full], keywords=["df -i shows the root file system at 100% of its inodes"]),
        _incident(2, signatures=["touch: cannot touch 'x': No space left on device"],
                  keywords=["the inodes are used up, the storage is enough"]),
        _incident(3, signatures=[full], keywords=["the checkpoints filled the scratch disk"]),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003"]]


def test_token_ids_past_the_embedding_are_one_failure_whatever_the_assertion_says() -> None:
    model = {"symptom": "crash", "layer": "model-code"}
    records = [
        _incident(1, signatures=["RuntimeError: CUDA error: device-side assert triggered"],
                  keywords=["added special tokens to the tokenizer, forgot resize_token_embeddings"], **model),
        _incident(2, signatures=["Indexing.cu:1146: indexSelectLargeIndex: block: [58,0,0], thread: [21,0,0] "
                                 "Assertion `srcIndex < srcSelectDimSize` failed."],
                  keywords=["a custom tokenizer larger than the model's embedding"], **model),
        # the same assertion: a position past max_position_embeddings, an index into a person's own table
        _incident(3, signatures=["RuntimeError: CUDA error: device-side assert triggered"],
                  keywords=["sequences longer than max_position_embeddings"], **model),
        _incident(4, signatures=["Indexing.cu:1146: indexSelectLargeIndex: block: [58,0,0], thread: [21,0,0] "
                                 "Assertion `srcIndex < srcSelectDimSize` failed."],
                  keywords=["category id 12 into an embedding of 10 rows"], **model),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003"], ["INC-0004"]]
