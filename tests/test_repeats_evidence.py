"""Repeat grouping on the evidence real records carry: a particular failure of a coarser mode,
codes quoted in prose, a description read alone, the phase a failure struck in, and log lines that
say no more than their mode (issue 11)."""
from __future__ import annotations

from test_repeats import _groups, _incident
from tooling.analysis.identity import identify_data
from tooling.catalogue.codes import codes
from tooling.catalogue.modes import catalogue
from tooling.catalogue.phases import phase_of

WATCHDOG = ("[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=81, OpType=ALLREDUCE, NumelIn=1, "
            "NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.")
REMOTE = "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."
STORE = ("torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has "
         "failed. See inner exception for details.")


def test_a_particular_failure_wins_over_the_mode_it_refines() -> None:
    records = [
        _incident(1, signatures=[REMOTE, "[796886.053354] mlx5_core 0000:8d:00.0: Port: 1 Link DOWN"]),
        _incident(2, signatures=["[321112.250473] mlx5_core 0000:54:00.0: Port: 1 Link DOWN"]),
        _incident(3, signatures=[REMOTE], root_cause="The IB link of node7 flapped under load."),
        _incident(4, signatures=[REMOTE]),  # a peer that exited or the network: nothing says which
    ]
    assert _groups(records) == [["INC-0001", "INC-0002", "INC-0003"], ["INC-0004"]]
    assert str(identify_data(records[2].data).evidence) == "failure mode network.link-flap"


def test_a_port_in_use_is_not_an_unreachable_store_nor_a_store_overwhelmed_at_scale() -> None:
    records = [
        _incident(1, signatures=["[W socket.cpp:426] [c10d] The server socket has failed to bind to [::]:29500 "
                                 "(errno: 98 - Address already in use)."]),
        _incident(2, signatures=["42692884fcba:140:140 [0] include/socket.h:333 NCCL WARN Call to bind failed : "
                                 "Address already in use"]),
        _incident(3, signatures=[STORE]),
        _incident(4, signatures=[STORE], keywords=["only above 512 nodes", "connection limit"]),
        _incident(5, signatures=[STORE], title="torchrun cannot reach the store on the head node"),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003", "INC-0005"], ["INC-0004"]]


def test_a_planned_stop_is_not_the_maintenance_that_struck() -> None:
    records = [
        _incident(1, title="Emergency maintenance took the cluster down"),
        _incident(2, title="Planned maintenance window for a firmware upgrade"),
        _incident(3, title="Planned downtime: operator-initiated dataset update"),
        _incident(4, signatures=["gpu          up 14-00:00:0      5  maint c[003,005,011,013,019]"]),
    ]
    assert _groups(records) == [["INC-0001"], ["INC-0002", "INC-0003", "INC-0004"]]


def test_a_code_quoted_in_a_description_names_its_mode() -> None:
    records = [
        _incident(1, keywords=["launcher exits with return code = -9 while every rank loads the model"]),
        _incident(2, signatures=["Out of memory: Killed process 81234 (python) total-vm:1234kB"]),
        _incident(3, keywords=["exited with code 1 after an hour"]),  # exit 1 names no failure
    ]
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003"]]
    assert [codes(s).exit for s in ("[launch.py:324:sigkill_handler] exits with return code = -9",
                                    "the job exited with error 137", "Process exited with status 139")] \
        == [(137,), (137,), (139,)]


def test_a_description_alone_is_read_for_the_cause_it_names_most() -> None:
    records = [
        # (a data loader named in it would tell what held the descriptors: tests/test_repeats_open_files_and_tmp.py)
        _incident(1, title="Workers cannot open shared memory object",
                  root_cause="The process ran out of file descriptors; raising ulimit -n fixed it."),
        _incident(2, signatures=["OSError: [Errno 24] Too many open files"]),
        _incident(3, keywords=["shared memory", "ulimit"]),  # as much one as the other: neither
        # with a signature to go by, a description naming two causes does not decide
        _incident(4, signatures=["NCCL WARN Timeout at work 12 on node203"], failure_mode="nccl.collective-timeout",
                  root_cause="A degraded cable on node203 HCA mlx5_0 made the link flap.", run="r"),
        _incident(5, signatures=["NCCL WARN Timeout at work 8812 on node017"], run="r"),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003"], ["INC-0004", "INC-0005"]]


def test_the_phase_tells_apart_what_the_line_cannot() -> None:
    records = [
        _incident(1, title="Segmentation fault while saving a checkpoint"),
        _incident(2, title="A rank dies when saving checkpoints",
                  signatures=["torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: -11)"]),
        _incident(3, title="Segmentation fault during evaluation"),
        _incident(4, title="NCCL timeout while saving the checkpoint", signatures=[WATCHDOG]),
        _incident(5, title="NCCL timeout at step 1200", signatures=[WATCHDOG]),
        _incident(6, title="Saving the model times out in an all-reduce", signatures=[WATCHDOG]),
        # the save outlasting the timeout, in any run; a timeout with no phase named meets only its run's
        _incident(7, title="Saving the model times out in an all-reduce", signatures=[WATCHDOG], run="other"),
        _incident(8, title="NCCL timeout at step 800", signatures=[WATCHDOG], run="other"),
        _incident(9, title="NCCL timeout at step 20", signatures=[WATCHDOG], run="other"),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003"], ["INC-0004", "INC-0006", "INC-0007"],
                                ["INC-0005"], ["INC-0008", "INC-0009"]]
    assert identify_data(records[3].data).key == ("mode", "nccl.collective-timeout", "phase=checkpoint-save")
    assert identify_data(records[4].data).key[-1] == "scope=r"


def test_a_phase_is_one_the_incident_names_and_its_mode_does_not_imply() -> None:
    modes = catalogue()
    segfault, mismatch = modes.get("process.segfault"), modes.get("checkpoint.load-mismatch")
    assert phase_of({"title": "Hang at the end of the epoch"}, segfault) == "epoch-end"
    assert phase_of({"title": "x", "signatures": ["hang-watchdog: phase=evaluate, rank 3 waiting"]}, segfault) \
        == "evaluation"
    assert phase_of({"title": "Segfault at step 1200"}, segfault) is None
    assert phase_of({"title": "Hangs during validation"}, segfault) == "evaluation"
    assert phase_of({"title": "Load fails right after saving the checkpoint"}, segfault) is None  # two phases
    assert phase_of({"title": "Resuming from the checkpoint fails: missing keys"}, mismatch) is None


def test_a_line_that_says_no_more_than_its_mode_groups_nothing() -> None:
    records = [
        _incident(1, signatures=["died with <Signals.SIGSEGV: 11>"]),
        _incident(2, signatures=["died with <Signals.SIGSEGV: 11>."]),
        _incident(3, signatures=["failed (exitcode: -11) local_rank: 3 (pid: 812917) of binary: /usr/bin/python3"]),
        _incident(4, signatures=["failed (exitcode: -11) local_rank: 0 (pid: 4411) of binary: /usr/bin/python3"]),
        _incident(5, signatures=["node1:81:81 [0] NCCL WARN Cuda failure 'out of memory'"]),
        _incident(6, signatures=["node2:93:93 [3] NCCL WARN Cuda failure 'out of memory'"]),
    ]
    assert _groups(records) == [["INC-0001"], ["INC-0002"], ["INC-0003"], ["INC-0004"], ["INC-0005", "INC-0006"]]


def test_a_named_component_is_not_a_failed_one() -> None:
    records = [
        _incident(1, keywords=["hang on b200", "gpus sometimes not communicating through nvlink"]),
        _incident(2, signatures=["what():  CUDA error: uncorrectable NVLink error detected during the execution"]),
        _incident(3, title="NVLink errors on node12 after the driver update"),
    ]
    assert _groups(records) == [["INC-0001"], ["INC-0002", "INC-0003"]]


def test_a_wait_that_outlasts_rank_0_preparing_the_data_is_that_phase_in_any_run() -> None:
    socket = ("[rank1]:[W516 14:34:56.854597329 socket.cpp:489] [c10d] waitForInput: socket SocketImpl(fd=79, "
              "addr=[localhost]:41170, remote=[localhost]:29500) timed out after 1800000ms")
    records = [
        _incident(1, title="Fine-tune dies after half an hour of tokenizing the dataset", signatures=[WATCHDOG]),
        _incident(2, title="Timeout while the dataset is being grouped into chunks", signatures=[WATCHDOG],
                  run="other"),
        # the store's socket timed out while rank 0 still tokenized: the ranks had met, not a rendezvous
        _incident(3, title="Rank 1 gives up on the rendezvous store while prompts are tokenized",
                  signatures=[socket]),
        _incident(4, title="torchrun cannot reach the store on the head node", signatures=[STORE]),
        _incident(5, title="Throws after thirty minutes", keywords=["the others wait at a barrier while rank 0 "
                                                                    "preprocesses the data"], run="third"),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002", "INC-0003", "INC-0005"], ["INC-0004"]]
    assert identify_data(records[2].data).key == ("mode", "nccl.collective-timeout", "phase=data-preparation")
    corrupt = catalogue().get("data.corrupt-sample")  # every data failure strikes while data is prepared
    assert phase_of({"title": "tokenizer worker hung on a corrupt shard"}, corrupt) is None


def test_host_memory_exhausted_by_a_save_is_the_saves_not_the_runs() -> None:
    records = [
        _incident(1, title="Killed at every checkpoint save", keywords=["ran out of RAM"]),
        _incident(2, title="Killed while saving the model", keywords=["host memory exhausted"], run="other"),
        _incident(3, title="Killed while reloading the checkpoint to resume", keywords=["needs more RAM"]),
        _incident(4, title="Trainer killed as the model loads", keywords=["solved by a machine with more RAM"]),
    ]
    assert _groups(records) == [["INC-0001", "INC-0002"], ["INC-0003", "INC-0004"]]
