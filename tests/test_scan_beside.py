"""tooling scan reads a large buffer with the automaton in a thread of its own (scan.Flagged) while
it samples and counts the same bytes (sampling.Numeric.count): the drafts, their line numbers and
every log's counts are those of reading one after the other, chunk boundaries anywhere."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from support import CORPUS
from tooling.logs import sampling, scan
from tooling.writers.filing import as_json

NOW = datetime.fromisoformat("2026-11-29T12:00:00+00:00")
HEALTHY = "2026-11-02 03:14:{s:02d},000 INFO [train.py:214] step {n} | loss 2.{n:04d} | grad_norm 0.812 | lr 3.00e-04\n"


def a_log(tmp_path: Path) -> Path:
    """The corpus logs, each between runs of progress lines of varied lengths: failures at every
    place of a chunk and of a counted block."""
    parts = []
    for number, name in enumerate(sorted((CORPUS / "logs").iterdir())):
        parts.append("".join(HEALTHY.format(s=k % 60, n=k) for k in range(37 * number + 11)))
        parts.append(name.read_text(encoding="utf-8"))
    path = tmp_path / "train.log"
    path.write_text("".join(parts), encoding="utf-8")
    return path


def scanned(log: Path, chunk: int) -> tuple[list[dict], list[scan.LogStats], int]:
    result = scan.scan_logs([log], now=NOW, chunk=chunk)
    return [as_json(d) for d in result.drafts], result.logs, result.consequences


@pytest.mark.parametrize("chunk", [4096, 65536])
def test_the_automaton_beside_and_the_lines_counted_ahead_change_nothing(tmp_path: Path, chunk: int,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    log = a_log(tmp_path)
    monkeypatch.setattr(scan, "BESIDE", 1 << 40)  # never a thread
    monkeypatch.setattr(sampling, "COUNTED", 1 << 40)  # no block counted ahead
    alone = scanned(log, chunk)
    assert alone[0] and alone[1][0].lines > 500
    monkeypatch.setattr(scan, "BESIDE", 0)  # a thread for every buffer (on one core too)
    monkeypatch.setattr(scan, "CORES", 2)
    monkeypatch.setattr(sampling, "COUNTED", 97)  # blocks of 97 bytes: matches and samples across their edges
    assert scanned(log, chunk) == alone
