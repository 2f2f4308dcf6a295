"""A log cut inside a traceback whose header says the process went on drafts nothing: a thread
other than the main one (raw-log sweep 9, wandb's uploader thread: Python's "Exception in thread
NAME:") or an exception Python swallowed (sweep 10, a DataLoader's __del__ under "Exception
ignored in:": a destructor, an atexit or weakref callback). A cut traceback of the main thread,
and a thread's traceback whose exception is in the log, still draft. A header written on a progress
bar's line (sweep 11: tqdm redraws its bar with a carriage return, so a traceback that interrupts it
starts after the bar) is a header all the same; the same words quoted inside a sentence are none.
Made-up logs."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from tooling.logs.scan import scan_logs

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
DEL_FRAMES = ['  File "/opt/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 1466, in __del__',
              "    self._shutdown_workers()",
              '  File "/opt/lib/python3.8/multiprocessing/connection.py", line 931, in wait',
              "    ready = selector.select(timeout)"]
FRAMES = ['  File "/opt/lib/python3.8/threading.py", line 932, in _bootstrap_inner',
          "    self.run()",
          '  File "/opt/lib/python3.8/site-packages/wandb/sdk/internal/file_stream.py", line 299, in _send',
          "    self._handle_response("]


def drafted(tmp_path: Path, lines: list[str]) -> list[str]:
    log = tmp_path / "train.log"
    log.write_text("".join(f"{text}\n" for text in lines), encoding="utf-8")
    return [d.mode.id for d in scan_logs([log], now=NOW).drafts]


def run(epochs: int) -> list[str]:
    return [f"Epoch {i}: loss = 0.{40 - i:03d}" for i in range(epochs)]


def test_a_threads_traceback_cut_by_the_logs_end_drafts_nothing(tmp_path: Path) -> None:
    assert drafted(tmp_path, run(5) + ["Exception in thread Thread-5:", "Traceback (most recent call last):",
                                       *FRAMES]) == []
    assert drafted(tmp_path, run(5) + ["Exception in thread Thread-2 (_pin_memory_loop):",
                                       "Traceback (most recent call last):", *FRAMES]) == []


def test_the_main_threads_traceback_cut_by_the_logs_end_still_drafts(tmp_path: Path) -> None:
    assert drafted(tmp_path, run(5) + ["Traceback (most recent call last):", *FRAMES]) == ["other.unclassified"]


def test_a_threads_traceback_with_its_exception_still_drafts(tmp_path: Path) -> None:
    assert drafted(tmp_path, run(5) + ["Exception in thread Thread-5:", "Traceback (most recent call last):",
                                       *FRAMES, "RuntimeError: CUDA error: an illegal memory access was encountered"]) \
        == ["cuda.illegal-memory-access"]


def test_an_ignored_exceptions_traceback_cut_by_the_logs_end_drafts_nothing(tmp_path: Path) -> None:
    header = "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f4ed3cfa430>"
    assert drafted(tmp_path, run(5) + [header, "Traceback (most recent call last):", *DEL_FRAMES]) == []
    assert drafted(tmp_path, [header, "Traceback (most recent call last):", *DEL_FRAMES]) == []


def test_the_main_threads_cut_traceback_still_drafts_after_the_word_ignored(tmp_path: Path) -> None:
    assert drafted(tmp_path, run(5) + ["Traceback (most recent call last):", *DEL_FRAMES]) == ["other.unclassified"]
    # the words "ignored" elsewhere are no such header
    assert drafted(tmp_path, run(5) + ["Warning: 3 samples ignored in batch", "Traceback (most recent call last):",
                                       *DEL_FRAMES]) == ["other.unclassified"]


BAR = "model.neff:  80%|████████████████████▊     | 16.0M/20.0M [00:00<00:00, 51.3MB/s]"
UPLOAD = ['  File "/usr/local/lib/python3.8/dist-packages/huggingface_hub/utils/_errors.py", line 269, in hf_raise_for_status',
          "    response.raise_for_status()"]


def test_a_traceback_written_on_a_progress_bars_line_is_read_as_one(tmp_path: Path) -> None:
    # cut by the log's end: the run's death, as any main thread's cut traceback
    assert drafted(tmp_path, run(5) + [f"{BAR}Traceback (most recent call last):", *UPLOAD]) == ["other.unclassified"]
    # whole: its exception line names the mode, as under a header of its own line
    bar = " 45%|####5     | 9/20 [00:01<00:02,  5.10it/s]"
    assert drafted(tmp_path, run(5) + [f"{bar}Traceback (most recent call last):", *UPLOAD,
                                       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]) \
        == ["cuda.oom"]


def test_the_headers_words_inside_a_sentence_are_no_traceback(tmp_path: Path) -> None:
    quoted = "note: a failed upload prints Traceback (most recent call last): then the frames, harmlessly"
    assert drafted(tmp_path, run(5) + [quoted, *UPLOAD]) == []
    # a bar's text that does not end where the header starts (words between) is no bar run into it
    assert drafted(tmp_path, run(5) + [f"{BAR} upload retried, see Traceback (most recent call last):",
                                       *UPLOAD]) == []
