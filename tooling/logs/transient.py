"""A NaN or Inf written as a value, which the run's next reading of the same quantity has finite again.

Under fp16 (or bf16 with a loss scaler) a step whose gradients overflow is skipped: its gradient
norm is inf or nan, and a logger that averages an interval's readings (mmcv's, mmengine's) prints
``grad_norm: nan`` for the whole interval, while the loss goes on falling. The next reading of
that quantity, on the next progress line that writes it, is finite: the run did not go to NaN,
and nothing is drafted. A run gone to NaN writes it again on every reading (the HF Trainer's
``'loss': 0.0, 'grad_norm': nan`` line after line), or stops there (a log that ends on it, a
crash after it): drafted, as before. The next reading is the next line written the same way (the
same names of values, in the same order: the same logger's line, not another rank's, another
logger's or a summary's); one of the same step (or epoch) or a lower one is another rank's, or the run went
back (a restart from a checkpoint, a rollback): no recovery, the NaN was real. Only lines already
read are looked at: a followed log that has not written the next reading yet drafts it.
"""
from __future__ import annotations

import math
import re

from tooling.logs import blocks
from tooling.logs.numbers import numbers, non_finite

LOOKAHEAD = 40  # lines searched for the next reading of the quantity (unknown.TAIL's reach)
_VALUE = r"['\"]?\s*[:=]?\s*['\"]?(?P<value>[-+]?(?:nan|inf(?:inity)?|[0-9]+(?:\.[0-9]*)?(?:e[-+]?[0-9]+)?))"
_NAME = re.compile(r"([A-Za-z_][\w/.-]*)['\"]?\s*[:=]")  # a value's name: "grad_norm:", "'loss':", "lr="


_EPOCH = re.compile(r"\bepoch['\"]?\s*[:=]?\s*['\"]?([0-9]+(?:\.[0-9]+)?)", re.IGNORECASE)


def _counter(line: str) -> float | None:
    """How far the run is at a line: its step, else its epoch ("'epoch': 0.7497", "epoch: 3451")."""
    step = numbers(line).step
    if step is not None:
        return step
    epoch = _EPOCH.search(line)
    return float(epoch.group(1)) if epoch else None


def _names(line: str) -> tuple[str, ...]:
    """The names of the values a line writes, in order: what a logger's lines share."""
    return tuple(name.lower() for name in _NAME.findall(line))


def recovered(buffer: bytearray, start: int, limit: int, text: str) -> bool:
    """Whether the NaN or Inf value of the line ``text`` (at ``start``) is finite again at the next
    reading of its quantity, the run's step counter not gone back (see the module's docstring)."""
    reading = non_finite(text)
    if reading is None:
        return False
    written = re.compile(r"(?<![\w/.-])" + re.escape(reading.key) + _VALUE, re.IGNORECASE)
    step, names = _counter(text), _names(text)
    following = blocks.decode(buffer, start, limit)[1]
    for _ in range(LOOKAHEAD):
        if following < 0 or following >= limit:
            return False
        line, following = blocks.decode(buffer, following, limit)
        found = written.search(line)
        if found is None or _names(line) != names:
            continue
        value = float(found.group("value"))
        later = _counter(line)
        went_back = step is not None and later is not None and later <= step
        return math.isfinite(value) and not went_back
    return False
