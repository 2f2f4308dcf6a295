"""Where a guard's records go: a JSON-lines file, and any number of sinks (TensorBoard, wandb...).

The NaN guard writes every step's loss and gradient norm; the loss-spike guard every decision
with the numbers behind it. Both hand each record to each sink first (a sink gets the record as
it is, NaN and inf included), then append it to the file, flushed at once: the line a run died
after is the one worth reading.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, Sequence, TextIO

Sink = Callable[[dict[str, Any]], None]


class StepLog:
    def __init__(self, path: str | Path | None = None, sinks: Sequence[Sink] = ()) -> None:
        self._file: TextIO | None = open(path, "a", encoding="utf-8") if path else None
        self._sinks = list(sinks)

    def write(self, record: dict[str, Any]) -> None:
        for sink in self._sinks:
            sink(record)
        if self._file is not None:
            self._file.write(json.dumps(_portable(record)) + "\n")
            self._file.flush()

    def close(self) -> None:
        """Close the file and every sink that has a ``close`` method."""
        for sink in self._sinks:
            close = getattr(sink, "close", None)
            if close is not None:
                close()
        self._sinks = []
        if self._file is not None:
            self._file.close()
            self._file = None


def _portable(value: Any) -> Any:
    """JSON cannot hold NaN or inf portably: they are written as strings ("nan", "inf")."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _portable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_portable(v) for v in value]
    return value
