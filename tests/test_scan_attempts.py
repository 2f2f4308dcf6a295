"""Where one failure's story begins and ends in a raw log (issue 25, sweep 6's misses), by
mechanisms that hold whatever the wording: a scheduler's stop ends the job's attempt, so nothing a
later attempt writes is the aftermath of what came before it, and a time written inside a line is
that line's time; the error lines printed just above a traceback are its failure's; a launcher
told to stop from outside is that stop, not a failed child; a log that ends on a bare notice right
after its progress is a run killed from outside. Every log is made up; each mechanism has logs it
must draft and logs it must not."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from tooling.logs.context import line_time
from tooling.logs.scan import scan_logs

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
STEP = "2026-11-02 09:58:00,000 INFO [train.py:214] step 100 | loss 2.51 | lr 3.00e-04"
PREEMPTED = "slurmstepd: error: *** JOB 4821 ON node042 CANCELLED AT 2026-11-02T10:00:00 DUE TO PREEMPTION ***"
CANCELLED = "slurmstepd: error: *** JOB 4821 ON node042 CANCELLED AT 2026-11-02T10:00:05 ***"
UNWINDING = ["srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
             "slurmstepd: error: Failed to send MESSAGE_TASK_EXIT: Connection refused"]


def _bug(at: str) -> list[str]:
    """A rank's exception, its header under a line written at ``at`` (HH:MM:SS)."""
    return [f"2026-11-02 {at},000 INFO [train.py:50] loading shard index", "Traceback (most recent call last):",
            '  File "train.py", line 50, in <module>', "    main()", "ValueError: shard 7 has no owner"]


def _modes(tmp_path: Path, lines: list[str]) -> list[str]:
    path = tmp_path / "job.log"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return [draft.mode.id for draft in scan_logs([path], now=NOW).drafts]


@pytest.mark.parametrize(("at", "drafts"), [
    ("10:06:00", ["scheduler.preemption", "software.bug"]),  # the requeued attempt's failure, 6 minutes on
    ("10:00:20", ["scheduler.preemption"]),  # a rank that raises while the stop unwinds: the stop
])
def test_a_preemption_ends_the_attempt_and_what_follows_its_unwinding_is_not_its_aftermath(
        tmp_path: Path, at: str, drafts: list[str]) -> None:
    assert _modes(tmp_path, [STEP, PREEMPTED, *UNWINDING, *_bug(at)]) == drafts


@pytest.mark.parametrize(("at", "drafts"), [
    ("10:08:00", ["host.oom-killed", "software.bug"]),  # after the cancel and a requeue: not the OOM's
    ("10:00:30", ["host.oom-killed"]),  # a rank that raises as the cancel kills it: still the OOM's
])
def test_a_cancel_ends_the_attempt_so_a_later_failure_is_not_the_aftermath_of_one_before_it(
        tmp_path: Path, at: str, drafts: list[str]) -> None:
    oom = ("[Mon Nov  2 10:00:01 2026] Out of memory: Killed process 4242 (python3) total-vm:98765432kB, "
           "anon-rss:87654321kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:171234kB oom_score_adj:0")
    assert _modes(tmp_path, [STEP, oom, CANCELLED, *_bug(at)]) == drafts


def test_without_a_stop_a_later_exception_is_still_the_aftermath_within_the_window(tmp_path: Path) -> None:
    oom = ("[Mon Nov  2 10:00:01 2026] Out of memory: Killed process 4242 (python3) total-vm:98765432kB, "
           "anon-rss:87654321kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:171234kB oom_score_adj:0")
    assert _modes(tmp_path, [STEP, oom, *_bug("10:08:00")]) == ["host.oom-killed"]


def test_a_time_written_inside_the_line_above_is_the_time_a_line_without_one_inherits(tmp_path: Path) -> None:
    # submitit writes its time after its level, Slurm inside its message: the requeued job's
    # exception 45 minutes after the preemption is read at its time, not at the preemption's
    requeued = ["submitit ERROR (2026-11-02 10:45:40,210) - Submitted job triggered an exception",
                "Traceback (most recent call last):", '  File "train.py", line 50, in <module>', "    main()",
                "ValueError: shard 7 has no owner"]
    path = tmp_path / "job.log"
    path.write_text("\n".join([PREEMPTED, *UNWINDING, *requeued]) + "\n", "utf-8")
    preemption, bug = scan_logs([path], now=NOW).drafts
    assert (preemption.mode.id, bug.mode.id) == ("scheduler.preemption", "software.bug")
    assert bug.detected_at == datetime(2026, 11, 2, 10, 45, 40, 210000, tzinfo=timezone.utc)


@pytest.mark.parametrize(("line", "at"), [
    ("submitit ERROR (2026-11-02 10:45:40,210) - Submitted job triggered an exception", "2026-11-02T10:45:40.210000"),
    (PREEMPTED, "2026-11-02T10:00:00"),
    ("[rank3]: job 4821 saved at 2026-11-02T10:00:00", "2026-11-02T10:00:00"),  # after the rank's prefix
    ("2026-11-02 10:45:40,000 INFO resumed the run of 2026-11-01T08:00:00", "2026-11-02T10:45:40"),  # its start wins
    ("step 100 | loss 2.51", None),
])
def test_the_time_of_a_line_is_the_one_it_starts_with_else_one_inside_it(line: str, at: str | None) -> None:
    when = line_time(line, NOW)
    assert (when.at.replace(tzinfo=None).isoformat() if when and when.at else None) == at


THC = "THCudaCheck FAIL file=/opt/pytorch/torch/lib/THC/generic/THCStorage.cu line=66 error=2 : out of memory"
FRAMES = ['  File "train.py", line 84, in <module>', "    main()", '  File "model.py", line 97, in forward',
          "    return self.decoder(x)"]


def _drafts(tmp_path: Path, lines: list[str]) -> list[tuple[str, int, int, list[str]]]:
    path = tmp_path / "run.log"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return [(d.mode.id, d.logs[str(path)].first, d.logs[str(path)].last, d.signatures)
            for d in scan_logs([path], now=NOW).drafts]


def test_the_error_printed_just_before_a_cut_traceback_is_in_its_draft(tmp_path: Path) -> None:
    told = "sampler.cc:412 index fetch failed for shard 7 (peer closed the stream)"
    [(mode, first, last, signatures)] = _drafts(tmp_path, [told, "Traceback (most recent call last):", *FRAMES])
    assert (mode, first, last) == ("other.unclassified", 1, 6)
    assert signatures[0] == told


def test_the_error_printed_just_before_a_whole_traceback_is_in_its_draft(tmp_path: Path) -> None:
    told = "[rank2]: worker 3 failed: the shard server refused the connection"
    lines = [STEP, told, *(f"[rank2]: {line}" for line in ["Traceback (most recent call last):", *FRAMES,
                                                            "ValueError: shard 7 has no owner"])]
    [(mode, first, last, signatures)] = _drafts(tmp_path, lines)
    assert (mode, first, last, signatures[0]) == ("software.bug", 2, 8, told)


@pytest.mark.parametrize("above", [
    "/opt/venv/lib/python3.11/site-packages/torch/utils/data.py:88: UserWarning: this will be an error in 2.6",
    "2026-11-02 09:58:00,000 INFO [train.py:214] step 100 | loss 2.51 | failed samples 0",  # progress
    "[rank5]: worker 3 failed: the shard server refused the connection",  # another rank's
    "loading the shard index",  # says no error
])
def test_a_line_above_a_traceback_that_is_no_error_of_its_process_stays_out_of_its_draft(
        tmp_path: Path, above: str) -> None:
    lines = [above, *(f"[rank2]: {line}" for line in ["Traceback (most recent call last):", *FRAMES,
                                                       "ValueError: shard 7 has no owner"])]
    assert [(mode, first) for mode, first, _, _ in _drafts(tmp_path, lines)] == [("software.bug", 7)]


AGENT = "W1102 10:00:00.388000 124326 torch/distributed/elastic/agent/server/api.py:723] "
CLOSING = ("W1102 10:00:00.389000 124326 torch/distributed/elastic/multiprocessing/api.py:900] "
           "Sending process 124533 closing signal SIGTERM")
TRAINER = ["[default0]:09:59:46    INFO Starting training step 0",
           "[default0]:09:59:46    INFO Waiting for training batch to arrive"]
RAISED = ["Traceback (most recent call last):", '  File "/usr/local/bin/torchrun", line 8, in <module>',
          "    sys.exit(main())",
          "torch.distributed.elastic.multiprocessing.api.SignalException: Process 124326 got signal: 15"]


def test_a_launcher_told_to_stop_from_outside_is_that_stop_not_a_failed_child(tmp_path: Path) -> None:
    # nothing in the log says why: the stop is the failure (an external kill), what carries it out its aftermath
    told = AGENT + "Received 15 death signal, shutting down workers"
    # torchrun's SignalException, raised once the workers are stopped, is the same stop (one episode)
    for lines, last in (([*TRAINER, told, CLOSING], 3), ([*TRAINER, told, CLOSING, *RAISED], 8)):
        assert [(mode, first, end) for mode, first, end, _ in _drafts(tmp_path, lines)] == \
            [("other.unclassified", 3, last)]


def test_torchruns_signal_exception_is_the_stop_it_was_told_not_a_bug(tmp_path: Path) -> None:
    assert [mode for mode, *_ in _drafts(tmp_path, [*TRAINER, *RAISED])] == ["other.unclassified"]


@pytest.mark.parametrize(("before", "drafts"), [
    ([], []),  # a person's Ctrl-C: no failure
    ([PREEMPTED], ["scheduler.preemption"]),  # the scheduler's: the preemption's
])
def test_a_stop_a_person_asked_for_or_a_failure_explains_drafts_nothing_more(
        tmp_path: Path, before: list[str], drafts: list[str]) -> None:
    told = "Received 2 death signal" if not before else "Received Signals.SIGTERM death signal"
    lines = [*TRAINER, *before, AGENT + told + ", shutting down workers",
             CLOSING.replace("SIGTERM", "SIGINT" if not before else "SIGTERM")]
    assert [mode for mode, *_ in _drafts(tmp_path, lines)] == drafts


def test_without_a_stop_it_was_told_a_launcher_closing_its_workers_is_a_failed_child(tmp_path: Path) -> None:
    failed = ("E1102 10:00:00.380000 124326 torch/distributed/elastic/multiprocessing/api.py:869] "
              "failed (exitcode: 1) local_rank: 0 (pid: 124533) of binary: /usr/bin/python3")
    assert {mode for mode, *_ in _drafts(tmp_path, [*TRAINER, failed, CLOSING])} == {"process.child-failed"}


PROGRESS = [STEP.replace("step 100", f"step {n}") for n in (100, 110, 120)]


@pytest.mark.parametrize("notice", ["已杀死", "Getötet", "Abgebrochen (Speicherabzug geschrieben)", "Terminado"])
def test_a_log_that_ends_on_a_bare_notice_right_after_its_progress_is_a_run_killed_from_outside(
        tmp_path: Path, notice: str) -> None:
    written = ["Writing metrics: /home/me/logdir/metrics.jsonl", ""]
    assert [(mode, first, last) for mode, first, last, _ in _drafts(tmp_path, [*PROGRESS, *written, notice])] == \
        [("other.unclassified", 6, 6)]


@pytest.mark.parametrize("ending", [
    [],  # the run's progress, then nothing: a paste cut there, or a run still going
    ["Training finished"],  # the run says it ended well
    ["Evaluating", *PROGRESS, "Evaluating"],  # a phase the run prints again and again
    ["Evaluating"], ["Loading data"], ["Starting validation"],  # a phase entered once: a live log, a cut paste
    ["bert/vocab.txt"],  # a path, not a notice
    ["Getötet", *PROGRESS],  # the run went on after it
])
def test_a_log_that_just_ends_drafts_nothing(tmp_path: Path, ending: list[str]) -> None:
    assert _drafts(tmp_path, [*PROGRESS, *ending]) == []


def test_a_notice_the_catalogue_reads_is_read_once(tmp_path: Path) -> None:
    path = tmp_path / "run.log"
    path.write_text("\n".join([*PROGRESS, "Killed"]) + "\n", "utf-8")
    [draft] = scan_logs([path], now=NOW).drafts
    assert (draft.mode.id, draft.count, draft.logs[str(path)].first) == ("other.unclassified", 1, 4)


# CUDA runtime errors by number, with the mode each is (tests/test_lookup_data.py holds the site's
# lookup to them too)
CUDA_BY_NUMBER = [
    (THC, "cuda.oom"),
    ("RuntimeError: cuda runtime error (77) at /pytorch/aten/src/THC/THCCachingAllocator.cpp:510",
     "cuda.illegal-memory-access"),  # CUDA 10.0's number for an illegal address
    ("kernels.cu:88: CUDA error code 700", "cuda.illegal-memory-access"),  # CUDA 10.1's for the same
    ("CUDA error code: 710 in sampler.cu", "cuda.device-assert"),
    ("CUDA error: 2 more retries left", None),  # a count, not a code
    ("CUDA error code 4 in foo.cu", None),  # a launch failure before CUDA 10.1, another error after it
]


@pytest.mark.parametrize(("line", "mode"), CUDA_BY_NUMBER)
def test_a_cuda_error_written_by_its_number_is_read_as_by_its_name(line: str, mode: str | None) -> None:
    from tooling.catalogue.recognise import recognise
    found = recognise(line).mode
    assert (found.id if found else None) == mode


def test_the_numbered_cuda_error_above_a_cut_traceback_names_its_draft(tmp_path: Path) -> None:
    # the traceback below it is its aftermath: one draft, of the mode the number names
    assert [(mode, first) for mode, first, _, _ in _drafts(tmp_path, [THC, "Traceback (most recent call last):",
                                                                       *FRAMES])] == [("cuda.oom", 1)]
