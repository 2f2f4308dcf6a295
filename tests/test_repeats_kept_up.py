"""Repeat grouping of jobs that stay up after one of their processes failed or was killed (heldout-repeats-16,
issue 25), with made-up incidents. "The job never terminates" reads the same whether an MPI rank left through the
normal finalize on its error, an error never became an abort, the failing rank hung in its exit handlers, or the
data loader's workers outlived the killed trainer; each is its own failure, and none told keeps the mode's incidents
one failure. A process that even SIGKILL cannot end is blocked in the kernel (a hung task)."""
from __future__ import annotations

from test_repeats import _groups, _incident
from tooling.analysis.identity import identify
from tooling.analysis.incidents import incident_views


def _key(record) -> tuple[str, ...] | None:  # type: ignore[no-untyped-def]
    return identify(incident_views([record])[0]).key


def _hang(n: int, title: str, *words: str):  # type: ignore[no-untyped-def]
    return _incident(n, symptom="hang", layer="unknown", title=title, keywords=list(words))


def test_what_kept_the_job_up_tells_four_failures_apart() -> None:
    records = [_hang(1, "the program deadlocks", "the job does not terminate after a rank failed",
                     "the rank calls MPI_Finalize on the error"),
               _hang(2, "ranks hang when one rank raises", "normal termination on one rank, a barrier on the rest"),
               _hang(3, "solver fails to terminate after an exception", "we never call MPI_Abort"),
               _hang(4, "the survivors blocked in the next collective", "abort the job on any exception"),
               _hang(5, "the trainer hangs on shutdown when a rank crashes", "its atexit handlers drain the queue"),
               _hang(6, "torchrun shutdown hangs", "exit handlers wait for peers that are gone"),
               _hang(7, "gpu memory not released after kill", "the DataLoader workers stay behind"),
               _hang(8, "gpu memory remains non-zero after Ctrl+C", "num_workers > 0 leaves processes")]
    assert sorted(_groups(records)) == [["INC-0001", "INC-0002"], ["INC-0003", "INC-0004"], ["INC-0005", "INC-0006"],
                                        ["INC-0007", "INC-0008"]]
    assert _key(records[0]) == ("mode", "process.stuck-after-crash", "kept-up-by=finalize-on-error")


def test_no_cause_told_keeps_the_job_that_stays_up_one_failure() -> None:
    records = [_hang(1, "Distributed jobs do not terminate if there is a crash"),
               _hang(2, "the script hangs forever if one child process dies")]
    assert _groups(records) == [["INC-0001", "INC-0002"]]
    assert _key(records[0]) == ("mode", "process.stuck-after-crash")


def test_a_process_that_sigkill_cannot_end_is_a_hung_task() -> None:
    unkillable = _hang(1, "training process stays after kill", "it could not be killed even with kill -9")
    interrupted = _hang(2, "leftover processes after Ctrl+C", "they cannot be killed from the tmux pane")
    assert _key(unkillable) == ("mode", "host.hung-task")
    assert (_key(interrupted) or ("",))[:2] != ("mode", "host.hung-task")
