"""A line written as its process ends, about what the end left behind (raw-log sweep 13,
tests/corpus/heldout-11): composer's launcher reports a rank that crashed, says it waits for the
others to terminate, and CPython's resource_tracker warns of 'leaked shared_memory objects to clean
up at shutdown'. The warning is the teardown of the crash, not its cause; alone, it still drafts as
shared memory left behind."""
from __future__ import annotations

from pathlib import Path

from scan_support import drafts

CRASH = "ERROR:composer.cli.launcher:Rank 1 crashed with exit code 1.\n"
WAIT = "Waiting up to 30 seconds for all training processes to terminate. Press Ctrl-C to exit immediately.\n"
LEAKED = ("/home/ek/miniconda3/envs/mosaicml/lib/python3.10/multiprocessing/resource_tracker.py:224: UserWarning: "
          "resource_tracker: There appear to be 6 leaked shared_memory objects to clean up at shutdown\n")
WARN = "  warnings.warn('resource_tracker: There appear to be %d '\n"
PROGRESS = "".join(f"step {i} | loss {2.5 - 0.01 * i:.4f} | lr 0.0003\n" for i in range(1, 6))


def spans(found: list[dict]) -> list[tuple[str, int, int]]:  # type: ignore[type-arg]
    return [(d["failure_mode"], d["logs"][0]["first_line"], d["logs"][0]["last_line"]) for d in found]


def test_a_shutdown_warning_after_a_crash_is_its_teardown(tmp_path: Path) -> None:
    assert spans(drafts(tmp_path, CRASH + WAIT + LEAKED + WARN)) == [("other.unclassified", 1, 1)]


def test_a_shutdown_warning_after_a_failure_of_a_specific_mode_is_its_aftermath(tmp_path: Path) -> None:
    oom = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert spans(drafts(tmp_path, PROGRESS + oom + LEAKED + WARN)) == [("cuda.oom", 6, 6)]


def test_a_shutdown_warning_alone_still_drafts_its_mode(tmp_path: Path) -> None:
    assert spans(drafts(tmp_path, PROGRESS + LEAKED + WARN)) == [("host.stale-shared-memory", 6, 6)]


def test_a_line_that_names_no_shutdown_is_not_taken_for_one(tmp_path: Path) -> None:
    # the same crash report, then a line of a specific mode that says nothing of an end: it is the
    # failure the report waited for, as before
    bus = "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
    assert [m for m, _, _ in spans(drafts(tmp_path, CRASH + WAIT + bus))] == ["host.shared-memory"]
