"""A NaN or Inf in a reading that sums up an interval of steps, which the next reading of the same
quantity has finite again.

Loggers that average an interval's readings (mmcv's and mmengine's, every 50 or 100 iterations)
print ``grad_norm: nan`` for the whole interval when one step of it overflowed under fp16 and the
loss scaler skipped it, while the loss goes on falling ("normal under mixed precision", their
maintainers say). Such a reading, whose next one is finite again, drafts nothing. A run gone to
NaN writes it again on every reading (the HF Trainer's ``'loss': 0.0, 'grad_norm': nan`` line after
line), or stops there (a log that ends on it, a crash after it): drafted, as before. So is a
reading of one step (the counters of the two readings one apart, or unknown): that step's own
value, whatever follows. The next reading is the next line written the same way (the same names
of values, in the same order: the same logger's line, not another rank's, another logger's or a
summary's); one of the same step or a lower one is another rank's, or the run went back (a
restart from a checkpoint, a rollback): no recovery, the NaN was real. Only lines already read are
looked at: a followed log that has not written the next reading yet drafts it.
"""
from __future__ import annotations

import math
import re

from tooling.logs import blocks
from tooling.logs.numbers import non_finite, numbers

LOOKAHEAD = 40  # lines searched for the next reading of the quantity (unknown.TAIL's reach)
_VALUE = r"['\"]?\s*[:=]?\s*['\"]?(?P<value>[-+]?(?:nan|inf(?:inity)?|[0-9]+(?:\.[0-9]*)?(?:e[-+]?[0-9]+)?))"
_NAME = re.compile(r"([A-Za-z_][\w/.-]*)['\"]?\s*[:=]")  # a value's name: "grad_norm:", "'loss':", "lr="
_DONE = re.compile(r"(?<![\w.])([0-9]+)/[0-9]+(?![\w.])")  # mmcv's "[1][100/62598]", ms-swift's "8280/11043"


def _counter(line: str) -> int | None:
    """How many steps the run has done at a line: its step, else its first count of a total."""
    step = numbers(line).step
    if step is not None:
        return step
    done = _DONE.search(line)
    return int(done.group(1)) if done else None


def _names(line: str) -> tuple[str, ...]:
    """The names of the values a line writes, in order: what a logger's lines share."""
    return tuple(name.lower() for name in _NAME.findall(line))


def recovered(buffer: bytearray, start: int, limit: int, text: str) -> bool:
    """Whether the NaN or Inf value of the line ``text`` (at ``start``) sums up an interval of steps
    and is finite again at the next reading of its quantity (see the module's docstring)."""
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
        later = _counter(line)
        interval = step is not None and later is not None and later - step > 1
        return interval and math.isfinite(float(found.group("value")))
    return False
