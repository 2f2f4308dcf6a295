"""The numbers a progress line carries: step, loss, gradient norm, loss scale, throughput, step time.

A progress line is what :func:`tooling.catalogue.signatures.is_progress` says it is; this module
only reads its numbers, in the shapes training frameworks print them: ``step 1200 | loss 2.31 |
grad_norm 0.9 | tokens/s 405,000`` (``key value``, ``key: value``, ``key=value``, ``'key': value``),
Megatron's ``iteration 7010/159576 | elapsed time per iteration (ms): 1523.4 | lm loss:
6.403921E+00 | loss scale: 65536.0 | grad norm: 1.234 |``, fairseq's ``loss=3.2, gnorm=1.2,
loss_scale=128, wps=12345``, nanoGPT's ``loss 2.3456, time 123.45ms, mfu 12.34%``. A validation
line (``lm loss value: 2.3``) names no training loss. Each quantity is its first reading in the line.
Which lines are read is the sampler's to say (:mod:`tooling.logs.sampling`): progress lines, and
any line that writes a training loss as a value (:data:`WRITTEN`: ``loss: 0.61``, ``'loss': 1.2``,
``Loss: 11.174``, a table's ``loss             1.356284``), a progress bar's rate (tqdm's
``299/3000 [10:44<1:37:05,  2.16s/it``, read as a :class:`Bar`) or a throughput written before its
unit (MXNet's ``Speed: 95.71 samples/sec``).

Lines that change the fp16 loss scale (DeepSpeed's ``Attempted loss scale: 4, reducing to 2``,
apex's ``reducing loss scale to 0.5``, fairseq's ``setting loss scale to: 64.0``) and progress
lines whose number is NaN or Inf are flagged by the scan's automaton (:data:`FLAGS`): they are
read wherever they are, not only where progress lines are sampled.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

_SEPARATOR = r"['\"]?\s*[:=]?\s*['\"]?"
_NUMBER = r"[-+]?(?:nan|inf(?:inity)?|(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?)"
# how frameworks name each quantity (lower-case), after a word that may qualify it (_PREFIXES)
_KEYS = {
    "loss": ("loss",),
    "grad_norm": ("grad norm", "grad_norm", "gradient norm", "gradient_norm", "gnorm"),
    "loss_scale": ("loss scale", "loss_scale", "loss-scale", "lossscale"),
    "speed": ("tokens/s", "tokens/sec", "tokens per second", "tokens_per_s", "tokens_per_sec", "tokens_per_second",
              "tok/s", "tps", "wps", "samples/s", "samples/sec", "samples per second", "samples_per_second",
              "sequences/s", "throughput", "throughput per gpu (tflop/s/gpu)", "tflops", "tflop/s",
              "tflops per gpu", "mfu"),
    "step_time": ("elapsed time per iteration (ms)", "step time", "step_time", "step time (ms)", "iter time",
                  "iter_time", "iteration time", "batch_time", "batch time", "time/step", "time per step",
                  "time", "dt"),
}
_QUANTITY = {key: name for name, keys in _KEYS.items() for key in keys}
_BARE_TIME = ("time", "dt", "time/step", "time per step")  # a time only when a unit says so ("time 123.45ms")
_PREFIXES = ("lm", "train", "training", "total")  # "lm loss", "train/loss"; any other word makes another loss
_KEY = "|".join(re.escape(key) for key in sorted(_QUANTITY, key=len, reverse=True))
_PAIR = re.compile("(" + _KEY + ")" + _SEPARATOR + "(" + _NUMBER + r")(ms|sec|s|%)?(?![a-z0-9])")
_WORD_BEFORE = re.compile(r"([a-z]+)[ _/]$")
_STEP = re.compile(r"(?:iteration|iter|global_step|step|num_updates)\s*[:=]?\s*(\d+)")
# a number that is not one, where a value stands: "gnorm nan |", "'loss': inf}", "ppl -nan,"
_NON_FINITE = re.compile(r"(?P<key>[A-Za-z_][\w/.-]*(?: [A-Za-z_][\w/.()-]*){0,3})" + _SEPARATOR +
                         r"(?P<value>[-+]?(?:nan|inf(?:inity)?))['\"]?\s*(?:[|,;)}\]]|$)", re.IGNORECASE)
_SCALE_CHANGE = re.compile(r"attempted loss scale: (?P<before>[0-9.e+-]+), reducing to (?P<after>[0-9.e+-]+)"
                           r"|reducing loss scale to (?P<apex>[0-9.e+-]+)|setting loss scale to:? (?P<fairseq>[0-9.e+-]+)",
                           re.IGNORECASE)
# for the scan's automaton (Hyperscan's and grep's subset: no look-around, [0-9] for digits)
# The first is loose on purpose (the line's value is read by non_finite): "nan" or "inf" and what
# ends a value. Anything before them would make Hyperscan look for "inf" alone, which every
# "NCCL INFO" line holds (a third of a training log's cost in tests/bench/bench_scan.py).
FLAGS = (r"(nan|inf)(['\"\s|,;)}\]]|$)",
         r"attempted loss scale: [0-9]|reducing loss scale to [0-9]|setting loss scale to:? [0-9]")
# lines whose numbers are read besides progress lines (for the sampler's automaton): a training loss
# written as a value, a progress bar's count, elapsed time and rate
WRITTEN = (r"\bloss['\"]?\s*[:=]?\s*['\"]?[-+]?[0-9]",
           r"[0-9]+/[0-9]+ \[[0-9:]+<[0-9:?]*, *[0-9.]+ ?(s/it|it/s)",
           r"[0-9] ?(samples|examples|images|imgs|tokens|sequences|sentences|words|frames) ?/ ?s(ec)?\b")
# a throughput written value first, its unit after (MXNet's Speedometer "Speed: 95.71 samples/sec",
# "12,345 tokens/s", "312.5 examples/sec"): items of work per second, whatever names the field
_RATE_AFTER = re.compile(r"(?<![\w.])(" + _NUMBER + r") ?((?:samples|examples|images|imgs|tokens|sequences|sentences"
                         r"|words|frames) ?/ ?s(?:ec)?)(?![a-z0-9])")
_BAR = re.compile(r"^(?P<label>.*?)[\s:]*(?:[0-9]+%)?\|[^|]*\|\s*(?P<done>[0-9]+)/(?P<total>[0-9]+) "
                  r"\[(?P<elapsed>[0-9:]+)<[0-9:?]*, *(?P<rate>[0-9.]+) ?(?P<unit>s/it|it/s)")


# tqdm redraws its bar with a carriage return and no line break, so what the process writes next (a
# traceback's header) lands on the bar's line, after the bar's "[elapsed<left, rate]": a bar of any
# unit ("80%|####8 | 16.0M/20.0M [00:00<00:00, 51.3MB/s]"), at the end of the text
_RUN_INTO = re.compile(r"\|[^|]*\| *[0-9.]+ ?[A-Za-z]*/[0-9.]+ ?[A-Za-z]* \[[0-9:]+<[0-9:?]*,[^\]]*\] *$")


def ends_on_a_bar(text: str) -> bool:
    """Whether ``text`` ends with a progress bar (tqdm's) that the next output was written after."""
    return _RUN_INTO.search(text) is not None


@dataclass(frozen=True)
class Bar:
    """A progress bar's line (tqdm's): which bar (its label), items done, seconds since it started."""
    label: str
    done: int
    elapsed: float


@dataclass(frozen=True)
class Reading:
    """One number of a line: as the line names and writes it, and its value (seconds for a time)."""
    key: str
    raw: str
    value: float
    unit: str = ""

    def __str__(self) -> str:
        return f"{self.key} {self.raw}{self.unit}"


@dataclass(frozen=True)
class Numbers:
    step: int | None = None
    loss: Reading | None = None
    grad_norm: Reading | None = None
    loss_scale: Reading | None = None
    speed: Reading | None = None  # throughput: higher is faster
    step_time: Reading | None = None  # seconds: lower is faster
    bar: Bar | None = None


def value_of(raw: str) -> float:
    return float(raw.replace(",", ""))


def numbers(line: str) -> Numbers:
    """The numbers of a progress line (each None where the line gives none), found by one regular
    expression over the lower-cased line: a scan reads thousands of these lines (tooling.logs.sampling)."""
    low = line.lower()
    found: dict[str, Reading] = {}
    for match in _PAIR.finditer(low):
        key, raw, unit = match.group(1), match.group(2), match.group(3) or ""
        name, shown = _QUANTITY[key], _qualified(low, match.start(), key)
        if name in found or shown is None:
            continue
        value = value_of(raw)
        if name == "step_time":
            if key in _BARE_TIME and unit not in ("ms", "s", "sec"):
                continue  # "time 12:30:00" is a clock, not a step's duration
            value = value / 1000 if unit == "ms" or "(ms)" in key else value
        found[name] = Reading(shown, raw, value, unit)
    if "speed" not in found and (rate := _RATE_AFTER.search(low)) is not None:
        found["speed"] = Reading(rate.group(2), rate.group(1), value_of(rate.group(1)))
    step = _STEP.search(low)
    return Numbers(int(step.group(1)) if step else None, **found, bar=bar(line) if "/it" in low or "it/s" in low else None)


def bar(line: str) -> Bar | None:
    """A progress bar's label, count and elapsed time (``lokr:  40%|###9 | 1199/3000 [2:49:04<14:04:18, 28.13s/it``)."""
    found = _BAR.search(line)
    if found is None:
        return None
    seconds = 0.0
    for part in found.group("elapsed").split(":"):
        seconds = seconds * 60 + int(part or 0)
    return Bar(found.group("label").strip(), int(found.group("done")), seconds)


def _qualified(low: str, start: int, key: str) -> str | None:
    """The key as the line qualifies it ("lm loss", "train/loss"); None when it is part of another
    word, or another loss ("eval loss", "val_loss", "nll_loss")."""
    before = low[start - 1] if start else " "
    if before.isalnum() or before in ".-":
        return None
    if before not in " _/" or key != "loss":
        return key
    word = _WORD_BEFORE.search(low, max(0, start - 12), start)
    if word is None:
        return key
    return f"{word.group(1)}{before}{key}" if word.group(1) in _PREFIXES else None


def non_finite(line: str) -> Reading | None:
    """The first number of the line that is NaN or Inf, where a value stands, if any."""
    found = _NON_FINITE.search(line)
    if found is None:
        return None
    return Reading(found.group("key"), found.group("value"), float(found.group("value")))


def scale_change(line: str) -> tuple[float | None, float] | None:
    """(the scale before, the scale after) of a line that reduces the fp16 loss scale."""
    found = _SCALE_CHANGE.search(line)
    if found is None:
        return None
    try:
        before = value_of(found.group("before")) if found.group("before") else None
        after = value_of(found.group("after") or found.group("apex") or found.group("fairseq"))
    except ValueError:  # "reducing to 1." at a sentence's end is "1."; "e-" alone is no number
        return None
    return (before, after) if math.isfinite(after) and (before is None or math.isfinite(before)) else None


def significant_digits(raw: str) -> int:
    """How many significant digits a number is written with ("2.31": 3, "6.403921E+00": 7, "0.0000": 4)."""
    mantissa = re.split(r"[eE]", raw.replace(",", "").lstrip("+-"))[0]
    digits = mantissa.replace(".", "")
    stripped = digits.lstrip("0")
    return len(stripped) if stripped else len(mantissa.split(".")[-1]) if "." in mantissa else 1


def decimals(raw: str) -> int | None:
    """How many digits a number is written with after its point ("0.35": 2, "0.0": 1, "7": 0); None
    for scientific notation ("0.000000E+00"), whose last digit is relative, not a fixed unit."""
    if "e" in raw.lower():
        return None
    _, point, fraction = raw.partition(".")
    return len(fraction) if point else 0
