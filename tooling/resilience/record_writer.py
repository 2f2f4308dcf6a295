"""The run reporter's side of its writer process: one child that writes the run record.

The write itself (re-read the page with ruamel, validate, write back) holds the GIL for a good
part of a second; in the training process, even in a thread, it would stall the loop for as long
(half the steps of a loop writing every second, measured by tests/bench/bench_reporter.py). So
:class:`RecordWriter` starts ``python -m tooling.writers.feed_server`` (:data:`SERVER`, found by
its name: nothing of the records is imported here, so this package lifts into a training loop
alone) at its first write, and each write is one JSON line on the child's stdin, answered by one
line (the protocol is the server's docstring).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SERVER = "tooling.writers.feed_server"
PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # so the child imports this very tooling


class RecordWriter:
    """One writer process, started on the first write and again after it died."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None

    def write(self, request: dict[str, Any]) -> str | None:
        """Have the child write ``request``; None once written, else what went wrong."""
        process = self._started()
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            answer = process.stdout.readline()
        except OSError:  # a broken pipe: it is gone
            answer = ""
        if not answer:
            self._process = None  # the next write starts another one
            return f"WriterGone: the writer process ended (exit status {process.wait()})"
        reply = json.loads(answer)
        return None if reply.get("ok") else str(reply.get("error"))

    def close(self, timeout: float) -> None:
        """Let the child finish and go; one that does not within ``timeout`` s goes when we do."""
        process, self._process = self._process, None
        if process is None:
            return
        assert process.stdin is not None
        try:
            process.stdin.close()
            process.wait(timeout)
        except (OSError, subprocess.TimeoutExpired):
            pass

    def _started(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            path = os.pathsep.join(p for p in (PACKAGE_PARENT, os.environ.get("PYTHONPATH")) if p)
            self._process = subprocess.Popen([sys.executable, "-m", SERVER], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": path})
        return self._process
