"""Repeat grouping of I/O errors and of shared memory left behind, by what caused them (heldout-repeats-17, issue
25), with made-up incidents. ``Input/output error`` reads the same whether a mounted drive gave up on a folder that
holds too many files or the disk under it is going bad. Shared memory left by a killed run that the next run finds
(its name taken) is one failure, leftovers piling up until /dev/shm is full another; segments that the login manager
removes under a live job (systemd-logind's RemoveIPC) are neither. None told keeps the mode's incidents one failure."""
from __future__ import annotations

from test_repeats import _groups, _incident
from tooling.analysis.identity import identify
from tooling.analysis.incidents import incident_views

EIO = "OSError: [Errno 5] Input/output error"


def _key(record) -> tuple[str, ...] | None:  # type: ignore[no-untyped-def]
    return identify(incident_views([record])[0]).key


def _crash(n: int, title: str, *words: str, signatures: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    return _incident(n, symptom="crash", layer="unknown", title=title, keywords=list(words),
                     **({"signatures": list(signatures)} if signatures else {}))


def test_what_failed_the_read_tells_two_io_errors_apart() -> None:
    records = [_crash(1, "reading images from the mounted drive fails", "the folder contains 80k images",
                      signatures=(EIO,)),
               _crash(2, "I/O error on the mounted drive", "a maintainer: there are too many files in one folder"),
               _crash(3, "Google Drive time-out while training", "split the directory, it has too many files"),
               _crash(4, "input/output error while saving", "dmesg: the disk is going bad, pending sectors"),
               _crash(5, "i/o error on the scratch disk", "smartctl shows a bad sector",
                      signatures=("[88.1] ata2.00: failed command: READ FPDMA QUEUED",))]
    assert sorted(_groups(records)) == [["INC-0001", "INC-0002", "INC-0003"], ["INC-0004", "INC-0005"]]
    assert _key(records[0]) == ("mode", "storage.io-error", "read-failed-by=crowded-folder")


def test_no_cause_told_keeps_io_errors_one_failure() -> None:
    records = [_crash(1, "training stops with an I/O error", signatures=(EIO,)),
               _crash(2, "random input/output errors in the data loader", "no idea when it occurs")]
    assert _groups(records) == [["INC-0001", "INC-0002"]]
    assert _key(records[0]) == ("mode", "storage.io-error")


def test_leftovers_that_filled_dev_shm_are_not_a_name_the_next_run_finds() -> None:
    records = [_crash(1, "restart fails after the worker was killed", "the killed worker leaves its shm segment behind",
                      "FileExistsError on the same name at the next start"),
               _crash(2, "leaked shared memory blocks the relaunch", "after Ctrl+C it cannot start again"),
               _crash(3, "stale shared memory segments after SIGKILL", "they accumulate in /dev/shm over the week"),
               _crash(4, "orphaned shared memory of crashed jobs", "the node's /dev/shm becomes full",
                      "we remove them with ipcrm")]
    assert sorted(_groups(records)) == [["INC-0001", "INC-0002"], ["INC-0003", "INC-0004"]]
    assert _key(records[0]) == ("mode", "host.stale-shared-memory")
    assert _key(records[3]) == ("mode", "host.stale-shared-memory", "left-behind=piled-up")


def test_segments_removed_under_a_live_job_are_not_a_full_dev_shm() -> None:
    reaped = [_crash(1, "training dies: could not open the shared memory file", "systemd-logind RemoveIPC=yes"),
              _crash(2, "shared memory removed mid-run", "it goes when the user logs out, before the job ends")]
    small = _crash(3, "Bus error in a data loader worker", "insufficient shared memory (shm) in the container")
    assert sorted(_groups([*reaped, small])) == [["INC-0001", "INC-0002"], ["INC-0003"]]
    assert _key(small) == ("mode", "host.shared-memory")


def test_a_process_killed_before_freeing_its_shared_memory_left_it_behind() -> None:
    assert (_key(_crash(1, "solver restart fails", "the killed solver never ran close(), leaving the shared-memory "
                                                   "segment in /dev/shm")) or ("",))[:2] \
        == ("mode", "host.stale-shared-memory")
    assert (_key(_crash(2, "shm after a crash", "when the program is killed, its shared memory is not freed"))
            or ("",))[:2] == ("mode", "host.stale-shared-memory")
