"""Repeat grouping by what kept ranks from meeting, or made them call different collectives (heldout-repeats-15,
issue 25), with made-up incidents. A rendezvous timeout reads the same whether a rank came late, the workers were
given an address of the master they cannot reach, the master's host name does not resolve for them, or the port is
closed; a collective mismatch whether a collective was gated on each rank's own decision or validation ran through
the DDP model on one rank. A cause only asked about or suspected tells none of them."""
from __future__ import annotations

import pytest

from test_repeats import _groups, _incident
from tooling.analysis.identity import identify
from tooling.analysis.incidents import incident_views

TIMEOUT = ("[E socket.cpp:793] [c10d] The client socket has timed out after 1800s while trying to connect to "
           "(127.0.0.1, 43771).")
MISMATCH = ("RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
            "CollectiveFingerPrint(SequenceNumber=12, OpType=ALLREDUCE), but Rank 0 is running collective: "
            "CollectiveFingerPrint(SequenceNumber=12, OpType=BROADCAST).")


def _start(n: int, **fields: object):  # type: ignore[no-untyped-def]
    return _incident(n, symptom="crash", layer="unknown", **fields)


def _key(record) -> tuple[str, ...] | None:  # type: ignore[no-untyped-def]
    return identify(incident_views([record])[0]).key


def test_what_kept_the_ranks_apart_tells_four_failures_apart() -> None:
    records = [_start(1, title="timeout at init", signatures=[TIMEOUT],
                      keywords=["rank 0 arrives late, still loading"]),
               _start(2, title="init_process_group fails",
                      keywords=["one node is slow with high variance across ranks"]),
               _start(3, title="main_process_ip not working", keywords=["the launcher targets another interface"]),
               _start(4, title="cannot reach the master", signatures=[TIMEOUT],
                      keywords=["you need to configure correct master addr and port"]),
               _start(5, title="rendezvous fails", keywords=["the hostname can not be resolved by the other node"]),
               _start(6, title="TCPStore timed out", keywords=["Name or service not known"]),
               _start(7, title="rendezvous hangs, port blocked by firewall"),
               _start(8, title="TCPStore timed out", keywords=["the exposed ports on the cluster are limited"])]
    assert sorted(_groups(records)) == [["INC-0001", "INC-0002"], ["INC-0003", "INC-0004"], ["INC-0005", "INC-0006"],
                                        ["INC-0007", "INC-0008"]]
    assert _key(records[0]) == ("mode", "network.rendezvous-failure", "met=late-rank")


@pytest.mark.parametrize("words", ["did you open the port number you're using?", "I think it is the rendezvous ports",
                                   "you are using 192.168.1.1 as the master ip"])
def test_a_cause_only_asked_about_tells_no_failure(words: str) -> None:
    assert _key(_start(1, title="TCPStore timed out", signatures=[TIMEOUT], keywords=[words])) \
        == ("mode", "network.rendezvous-failure")


def test_what_made_the_ranks_call_different_collectives_tells_two_failures_apart() -> None:
    records = [_incident(1, title="validation hangs", signatures=[MISMATCH],
                         keywords=["validation is only run on single gpu, through the DDP model"]),
               _incident(2, title="dist.barrier() never returns",
                         keywords=["the validation on only one GPU calls DDP's forward"]),
               _incident(3, title="checkpoint hang", signatures=[MISMATCH],
                         keywords=["some processes try to save and others don't"]),
               _incident(4, title="metric hang", keywords=["the skipping rank never issues the matching all_gather"]),
               _incident(5, title="mismatch error", signatures=[MISMATCH], keywords=["no idea why"])]
    groups = sorted(_groups(records))
    assert ["INC-0001", "INC-0002"] in groups and ["INC-0003", "INC-0004"] in groups
    assert _key(records[2]) == ("mode", "software.collective-mismatch", "called=rank-decides")
    assert _key(records[4]) == ("mode", "software.collective-mismatch")


@pytest.mark.parametrize("words", ["Ranks get different batch counts from variable-length data",
                                   "one rank first consumes its data loader while the others still train"])
def test_ranks_given_different_batch_counts_are_uneven_batches(words: str) -> None:
    assert _key(_incident(1, title="DDP hangs at the end of the epoch", keywords=[words])) \
        == ("mode", "data.exhausted", "batches=uneven-batches")
