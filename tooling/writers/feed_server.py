"""The run reporter's writer process: machine writes of a run record, outside the training process.

``python -m tooling.writers.feed_server`` is what :class:`tooling.resilience.record_writer.RecordWriter`
starts, by that name, at the reporter's first write: the training process never imports the
records. A training environment without the package's ``wiki`` extra starts ``tooling report
--serve`` of another environment instead (the same :func:`main`). Each request is one JSON line
on stdin, answered by one line on stdout, ``{"ok": true}`` or ``{"error": "LockTimeout: ..."}``::

    {"root": "/playbook" | null, "start": "/playbook/train", "run": "demo-7b", "now": ISO,
     "step": {"step": 50, "total_steps": 1000, "loss": 2.5, "tokens": 400, "tokens_per_s": 3900.0,
              "at": ISO} | null,
     "checkpoint": {"step": ..., "path": ..., "saved_at": ..., "verified": true} | null,
     "sample_every": 1800.0 | null, "lock_timeout": 30.0}

``root`` null: the repository above ``start`` (the training process's working folder when the
reporter was made). ``step`` holds the step's numbers as the loop has them; they become
``progress`` and a ``feed.samples`` item here, worded as ``tooling report`` words them
(:func:`~tooling.writers.feed_writes.step_values`), and are written by
:func:`~tooling.writers.feed_writes.feed_run`.

A write re-reads the page with ruamel, validates the result and writes it back: pure Python, a
good part of a second for a page with a full feed. It runs at the lowest CPU priority (nice 19):
where training keeps every core busy, a write waits for a free moment instead of taking a core
from it. It ignores SIGINT and SIGTERM (a Ctrl-C or a scancel meant for the trainer would
otherwise cut a write short) and goes when its stdin closes: when the reporter closes, or when
the training process dies, whatever kills it.
"""
from __future__ import annotations

import json
import os
import signal
import sys
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from tooling.records.layout import find_root
from tooling.records.runs import SAMPLE_EVERY
from tooling.writers.feed_writes import feed_run, step_values


def write(request: dict[str, Any]) -> Path:
    """One request's write; raises what :func:`feed_run` raises."""
    root = Path(request["root"]) if request.get("root") else find_root(Path(request["start"]))
    progress, sample = step_values(**request["step"]) if request.get("step") else (None, None)
    return feed_run(root, request["run"], now=datetime.fromisoformat(request["now"]), progress=progress,
                    sample=sample, checkpoint=request.get("checkpoint"),
                    sample_every=request.get("sample_every") or SAMPLE_EVERY,
                    lock_timeout=request.get("lock_timeout", 30.0))


def serve(requests: IO[str], replies: IO[str]) -> None:
    """Answer each request line with a reply line until ``requests`` ends."""
    for line in requests:
        try:
            write(json.loads(line))
            reply: dict[str, Any] = {"ok": True}
        except Exception as exc:  # said by the reporter, in the training process's log
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def main() -> None:
    """The writer process: at the lowest priority, deaf to the trainer's signals, until stdin ends."""
    os.nice(19)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    serve(sys.stdin, sys.stdout)


if __name__ == "__main__":
    main()
