"""Repeat grouping of too many open files and of a full /tmp, by what caused them (heldout-repeats-18, issue 25), with
made-up incidents. ``Too many open files`` reads the same whether a data loader's workers pass a descriptor per shared
tensor (however the reporter got past it: the sharing strategy or a higher limit), a program's own use outgrows a
limit too low for it, or a program never closes what it opens. ``No space left on device`` reads the same whichever
file system filled; a small /tmp filled by temporary files is remedied by TMPDIR, not by freeing the data disk. None
told keeps the mode's incidents one failure; PyTorch's message (its workers, its sharing strategy) is the loader's."""
from __future__ import annotations

from test_repeats import _groups, _incident
from tooling.analysis.identity import identify
from tooling.analysis.incidents import incident_views

EMFILE = "OSError: [Errno 24] Too many open files"
ENOSPC = "OSError: [Errno 28] No space left on device"
TORCH = ("RuntimeError: Too many open files. Communication with the workers is no longer possible. Please increase the "
         "limit using `ulimit -n` in the shell or change the sharing strategy by calling "
         "`torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code")


def _key(record) -> tuple[str, ...] | None:  # type: ignore[no-untyped-def]
    return identify(incident_views([record])[0]).key


def _crash(n: int, title: str, *words: str, signatures: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    return _incident(n, symptom="crash", layer="unknown", title=title, keywords=list(words),
                     **({"signatures": list(signatures)} if signatures else {}))


def test_what_holds_the_descriptors_tells_three_failures_of_too_many_open_files_apart() -> None:
    records = [_crash(1, "training dies with an ancdata error", signatures=("RuntimeError: received 0 items of ancdata",)),
               _crash(2, "validation crashes after a few batches", "I resolved it with set_sharing_strategy('file_system')",
                      signatures=(EMFILE,)),
               _crash(3, "batches kept in a list run the workers out of files", "too many open files with num_workers=4"),
               _crash(4, "the sync tool crashes on a large tree", "running it again with ulimit -n 10000 worked",
                      signatures=(EMFILE,)),
               _crash(5, "too many open files on macOS", "the default value is quite low; increase ulimit in system"),
               _crash(6, "the server stops after a few hours: too many files open", "a leak from close methods"),
               _crash(7, "Opened files must be closed: open file leak", "file handles left opened after a return")]
    assert sorted(_groups(records)) == [["INC-0001", "INC-0002", "INC-0003"], ["INC-0004", "INC-0005"],
                                        ["INC-0006", "INC-0007"]]
    assert _key(records[0]) == ("mode", "host.too-many-open-files", "files-held-by=loader-workers")


def test_a_higher_limit_that_got_the_loader_past_it_is_still_the_loaders() -> None:
    records = [_crash(1, "ancdata error in the data loader", "raising RLIMIT_NOFILE with ulimit -n 4096 fixed it"),
               _crash(2, "DataLoader workers: too many open files", "set_sharing_strategy('file_system') fixed it")]
    assert _groups(records) == [["INC-0001", "INC-0002"]]


def test_pytorchs_message_is_the_loaders_and_a_bare_line_tells_no_cause() -> None:
    message = _incident(1, symptom="crash", layer="unknown", title="job failed", keywords=[TORCH])
    bare = _crash(2, "the job failed", signatures=(EMFILE,))
    assert _key(bare) == ("mode", "host.too-many-open-files")
    # the message is the loader's own (its workers) and names both remedies: the loader's, not a limit too low
    assert _key(message) == ("mode", "host.too-many-open-files", "files-held-by=loader-workers")


def test_a_small_tmp_is_a_full_disk_of_its_own() -> None:
    records = [_crash(1, "sort fails", signatures=("sort: write failed: /tmp/sort0sKF1j: No space left on device",)),
               _crash(2, "install fails on this machine", "a limited /tmp; set the environment variable TMPDIR=/var/tmp",
                      signatures=(ENOSPC,)),
               _crash(3, "checkpoint save fails: the data disk is full", signatures=(ENOSPC,)),
               _crash(4, "no space left on device while writing logs", signatures=(ENOSPC,))]
    assert sorted(_groups(records)) == [["INC-0001", "INC-0002"], ["INC-0003", "INC-0004"]]
    assert _key(records[0]) == ("mode", "storage.disk-full", "filled=small-tmp")
