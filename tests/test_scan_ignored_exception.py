"""A log cut inside a traceback Python printed under "Exception ignored in:" (raw-log sweep 10, a
DataLoader's __del__ in a run that went on): Python swallowed that exception (a destructor, an
atexit or weakref callback) and its process went on, so the cut traceback drafts nothing, as a
thread's does; the main thread's cut traceback still drafts. Made-up logs."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from tooling.logs.scan import scan_logs

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
FRAMES = ['  File "/opt/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 1466, in __del__',
          "    self._shutdown_workers()",
          '  File "/opt/lib/python3.8/multiprocessing/connection.py", line 931, in wait',
          "    ready = selector.select(timeout)"]


def drafted(tmp_path: Path, lines: list[str]) -> list[str]:
    log = tmp_path / "train.log"
    log.write_text("".join(f"{text}\n" for text in lines), encoding="utf-8")
    return [d.mode.id for d in scan_logs([log], now=NOW).drafts]


def run(epochs: int) -> list[str]:
    return [f"Epoch {i}: loss = 0.{40 - i:03d}" for i in range(epochs)]


def test_an_ignored_exceptions_traceback_cut_by_the_logs_end_drafts_nothing(tmp_path: Path) -> None:
    header = "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f4ed3cfa430>"
    assert drafted(tmp_path, run(5) + [header, "Traceback (most recent call last):", *FRAMES]) == []
    assert drafted(tmp_path, [header, "Traceback (most recent call last):", *FRAMES]) == []


def test_the_main_threads_cut_traceback_still_drafts(tmp_path: Path) -> None:
    assert drafted(tmp_path, run(5) + ["Traceback (most recent call last):", *FRAMES]) == ["other.unclassified"]
    # the words "ignored" elsewhere are no such header
    assert drafted(tmp_path, run(5) + ["Warning: 3 samples ignored in batch", "Traceback (most recent call last):",
                                       *FRAMES]) == ["other.unclassified"]
