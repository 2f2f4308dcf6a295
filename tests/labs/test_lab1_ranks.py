"""Lab 1's trainer under torchrun: a USR1 that reaches one rank stops every rank at the same step."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tooling.diagnose.rank_dumps import children, rank_of

TRAIN = Path(__file__).resolve().parents[2] / "labs" / "01-slurm-auto-resume" / "train.py"


def _rank_pids(torchrun: int) -> dict[str, int]:
    return {rank_of(pid): pid for pid in children(torchrun)}


def test_ranks_agree_on_the_stop_and_only_rank_0_saves(tmp_path: Path) -> None:
    out = tmp_path / "run"
    torchrun = subprocess.Popen([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                                 str(TRAIN), "--out", str(out), "--total-steps", "100000", "--step-seconds", "0.01"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                                env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        deadline = time.monotonic() + 120
        while not ((out / "steps.log").exists() and len((out / "steps.log").read_text().splitlines()) > 30):
            assert time.monotonic() < deadline and torchrun.poll() is None, "training did not start"
            time.sleep(0.2)
        ranks = _rank_pids(torchrun.pid)
        assert sorted(ranks) == ["0", "1"]
        os.kill(ranks["1"], signal.SIGUSR1)  # only rank 1 is warned
        output, _ = torchrun.communicate(timeout=60)
    finally:
        if torchrun.poll() is None:
            for pid in _rank_pids(torchrun.pid).values():  # each rank has a session of its own
                os.kill(pid, signal.SIGKILL)
            os.killpg(torchrun.pid, signal.SIGKILL)
            torchrun.wait()
    stops = sorted(int(s) for s in re.findall(r"USR1: saved step (\d+)", output))
    assert torchrun.returncode == 0, output
    assert len(stops) == 2 and stops[0] == stops[1], output  # both ranks stopped at the same step
    manifest = (out / "checkpoints" / "manifest.json").read_text()
    assert f'"step": {stops[0]}' in manifest  # rank 0 saved that step
