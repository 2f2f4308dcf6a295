"""A log cut inside the traceback of a thread other than the main one (raw-log sweep 9, wandb's
uploader thread in a run that went on): Python's header "Exception in thread NAME:" says that
thread died and its process went on, so the cut traceback drafts nothing, while a cut traceback
of the main thread, and a thread's traceback whose exception is in the log, still draft. Made-up
logs."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from tooling.logs.scan import scan_logs

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
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
