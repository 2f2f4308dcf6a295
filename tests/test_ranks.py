"""Decisions across ranks: one rank's flag reaches all, and teardown waits for gloo to let go."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import torch

from tooling.resilience.ranks import any_rank, released, shutdown

ROOT = Path(__file__).resolve().parents[1]

VOTER = """
import sys
from pathlib import Path
import torch.distributed as dist
from tooling.resilience.ranks import any_rank, shutdown
dist.init_process_group("gloo")
rank = dist.get_rank()
first = next(i for i in range(200) if any_rank(rank == 1 and i >= 37))
Path(sys.argv[1], f"rank-{rank}.txt").write_text(str(first))  # one file each: stdout lines interleave
shutdown()
"""


def test_without_a_process_group_the_flag_is_the_answer() -> None:
    assert any_rank(True) is True and any_rank(False) is False
    shutdown()  # nothing to tear down: a no-op, not an error


def test_released_sees_a_reference_held_outside_python() -> None:
    x = torch.ones(3, requires_grad=True)
    y = (x * x).sum()  # the autograd graph keeps x to compute the gradient
    assert not released(x)
    del y
    assert released(x)


def test_a_flag_raised_on_one_rank_stops_every_rank_at_the_same_vote(tmp_path: Path) -> None:
    script = tmp_path / "voter.py"
    script.write_text(VOTER)
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", str(script),
         str(tmp_path)],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stdout + result.stderr
    assert [(tmp_path / f"rank-{rank}.txt").read_text() for rank in (0, 1)] == ["37", "37"]


EXITER = """
import atexit, sys
from pathlib import Path
from tooling.resilience.ranks import exit_rank
atexit.register(lambda: Path(sys.argv[1]).write_text("the interpreter's teardown ran"))
print("trained to step 3")  # left in the buffer: stdout is a pipe here
print("a warning", file=sys.stderr)
exit_rank(3)
"""


def test_exit_rank_skips_the_teardown_and_keeps_the_exit_status_and_output(tmp_path: Path) -> None:
    marker = tmp_path / "teardown.txt"
    result = subprocess.run([sys.executable, "-c", EXITER, str(marker)], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "PYTHONUNBUFFERED": "", "PYTHONPATH": str(ROOT)})
    assert (result.returncode, result.stdout, result.stderr) == (3, "trained to step 3\n", "a warning\n")
    assert not marker.exists()  # the teardown is what a gloo worker thread can abort
