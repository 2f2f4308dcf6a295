"""The run reporter's writer process: machine writes of a run record, outside the training process.

A write re-reads the page with ruamel, validates the result and writes it back: pure Python, a
good part of a second for a page with a full feed, and more with every record the repository
holds. In the training process, even in a thread, that work would hold the GIL and stall the
training loop for as long (half the steps of a loop writing every second, measured by
tests/bench/bench_reporter.py). So :class:`RecordWriter` starts ``python -m
tooling.resilience.record_writer`` at its first write, and each write is one JSON line of
:func:`tooling.writers.feed_writes.feed_run`'s arguments on the child's stdin, answered by one line:
``{"ok": true}`` or ``{"error": "LockTimeout: ..."}``.

The child runs at the lowest CPU priority (nice 19): where training keeps every core busy, a
write waits for a free moment instead of taking a core from it. It ignores SIGINT and SIGTERM
(a Ctrl-C or a scancel meant for the trainer would otherwise cut a write short) and goes when
its stdin closes: at :meth:`RecordWriter.close`, or when the training process dies, whatever
kills it.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import IO, Any

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # so the child imports this very tooling


class RecordWriter:
    """One writer process, started on the first write and again after it died."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None

    def write(self, request: dict[str, Any]) -> str | None:
        """Have the child call feed_run(**request); None once written, else what went wrong."""
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
            self._process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": path})
        return self._process


def serve(requests: IO[str], replies: IO[str]) -> None:
    """Answer each request line with a reply line until ``requests`` ends."""
    from tooling.writers.feed_writes import feed_run  # here, not in the training process

    for line in requests:
        request = json.loads(line)
        try:
            root, run, now = Path(request.pop("root")), request.pop("run"), datetime.fromisoformat(request.pop("now"))
            feed_run(root, run, now=now, **request)
            reply: dict[str, Any] = {"ok": True}
        except Exception as exc:  # said by the reporter, in the training process's log
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    os.nice(19)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    serve(sys.stdin, sys.stdout)
