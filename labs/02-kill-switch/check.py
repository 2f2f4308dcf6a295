"""Self-check of lab 2: STOP saves a valid checkpoint of a running training within 5 s and ends it,
SAVE saves without stopping, a queued job with STOP present never starts, and a rerun resumes.

Run: python labs/02-kill-switch/check.py  (exit status 0 when every check passes)
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tooling.resilience.checkpoint import CheckpointManager

TRAIN = Path(__file__).with_name("train.py")
LIMIT_SECONDS = 5.0


def start(out: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(TRAIN), "--out", str(out), *extra],
                            stdout=subprocess.PIPE, text=True)


def wait_for(process: subprocess.Popen[str], text: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    for line in process.stdout:
        if text in line:
            return line
        if time.monotonic() > deadline:
            break
    raise AssertionError(f"never saw {text!r}")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        trainer = start(out)
        wait_for(trainer, "step 300 ")
        (out / "SAVE").touch()
        saved = wait_for(trainer, "SAVE: saved step")
        assert not (out / "SAVE").exists(), "SAVE must be removed once saved"
        assert trainer.poll() is None, "SAVE must not stop training"
        requested = time.monotonic()
        (out / "STOP").touch()
        stopped = wait_for(trainer, "STOP: saved step")
        latency = time.monotonic() - requested  # the work is safe from here on
        # the interpreter's teardown (torch's) is the machine's speed, not the loop's: on a busy
        # machine it alone took more than 5 s, so the exit is waited for, not timed against the limit
        code = trainer.wait(timeout=120)
        exited = time.monotonic() - requested
        stop_step = int(stopped.split("step ")[1].split()[0])
        restored = CheckpointManager(out / "checkpoints").load_latest()
        assert code == 0 and restored is not None and restored[1] == stop_step
        assert latency < LIMIT_SECONDS, f"STOP took {latency:.2f} s to save"
        print(f"{saved.strip()}; STOP honoured after {latency:.2f} s at step {stop_step} (exited after "
              f"{exited:.2f} s); checkpoint verifies")

        queued = subprocess.run([sys.executable, str(TRAIN), "--out", str(out)], capture_output=True, text=True)
        assert queued.returncode == 0 and "not starting" in queued.stdout, queued.stdout
        (out / "STOP").unlink()
        rerun = subprocess.run([sys.executable, str(TRAIN), "--out", str(out), "--steps", str(stop_step + 50)],
                               capture_output=True, text=True, timeout=120)
        assert f"resumed from step {stop_step}" in rerun.stdout and f"finished at step {stop_step + 50}" in rerun.stdout
        print(f"queued job with STOP present did not start; rerun resumed from step {stop_step}")
    print("lab 2 self-check: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
