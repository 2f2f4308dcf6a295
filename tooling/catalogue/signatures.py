"""Normalising error signatures: the same failure logged on another node, rank or day matches.

Numbers, hosts, ranks, PIDs, addresses, paths and timestamps are noise; error codes that follow
a code keyword (``Xid 79``, ``errno 28``, ``exit code 137``, ``signal 9``) are the failure.
Two regex passes per signature: one for the noise shapes, one for numbers.
"""
from __future__ import annotations

import re
from functools import lru_cache

from tooling.catalogue.literals import any_of

# Tried left to right at each position; the first alternative that matches wins.
_NOISE = (
    # NVRM's "Xid (PCI:0000:ca:00): 79, pid=..." keeps its code next to the word Xid
    ("xid", r"xid\s*\(pci:[^)]*\)\s*:?\s*\d+"),
    # timestamps: ISO 8601, syslog "Nov 29 10:00:01", dmesg "[12345.678901]", clock times
    ("time", r"\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?"
             r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\s+\d{1,2}\s+\d{2}:\d{2}(?::\d{2})?"
             r"|\[\s*\d+\.\d+\]|\b\d{2}:\d{2}:\d{2}(?:\.\d+)?\b"),
    # addresses: PCI bus ids, IPs, UUIDs, hex
    ("pci", r"\b(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}(?:\.[0-9a-f])?\b"),
    ("ip", r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"),
    ("uuid", r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),
    ("hex", r"\b0x[0-9a-f]+\b|\b[0-9a-f]*\d[0-9a-f]*[a-f][0-9a-f]*\b"),
    # file system paths, absolute or relative to here ("./output/checkpoint-500", "../data"): a run's
    # own directory varies between occurrences as much as an absolute one
    ("path", r"(?<![\w.])(?:\.\.?(?=/))?(?:/[\w.@%+=:,~-]+)+/?"),
)
# A shape can only be present when its marker is: testing markers first keeps the common case
# (a line with a few numbers and no addresses) to one short regex.
_MARKERS = {"xid": ("xid",), "time": (":", "["), "pci": (":",), "ip": (".",), "uuid": ("-",), "hex": ("",),
            "path": ("/",)}
_XID_CODE = re.compile(r"(\d+)$")
_CODE_WORDS = ("xid", "err", "code", "status", "sig")
# Numbers after these words are error codes and stay; every other number is noise.
_NUMBERS_RE = re.compile(r"\b(xid|errno|error|err|code|status|signal|sig)\b([\s:=#]*)(\d+)|\d+")
_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=None)
def _noise_re(names: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in _NOISE if name in names))


def _noise(match: re.Match[str]) -> str:
    kind = match.lastgroup
    if kind == "xid":
        return "xid " + _XID_CODE.search(match.group(0)).group(1)  # type: ignore[union-attr]
    return f"<{kind}>"


def _number(match: re.Match[str]) -> str:
    return match.group(0) if match.group(1) else "#"


@lru_cache(maxsize=1 << 18)
def normalise(signature: str) -> str:
    """A signature with its noise replaced, lower-cased and with spaces folded."""
    text = signature.lower()
    # any(map(...)): the tests run in C, where a generator per shape cost more than the tests
    present = tuple(name for name, marks in _MARKERS.items() if any(map(text.__contains__, marks)))
    text = _noise_re(present).sub(_noise, text)
    if any(map(text.__contains__, _CODE_WORDS)):
        text = _NUMBERS_RE.sub(_number, text)
    else:
        text = _DIGITS.sub("#", text)
    return _SPACE.sub(" ", text).strip(" .,;:")


class Caseless:
    """A case-insensitive search whose answer is only whether it found: an ASCII line's lower case
    is searched case-sensitively, 3 to 5 times faster in ``re`` and the same answer for ASCII text;
    any other line as it is, since Unicode case folding is not lower-casing ("ſ" is an "s" to
    ``re.IGNORECASE``, "İ" an "i")."""

    def __init__(self, pattern: str) -> None:
        assert pattern == pattern.lower(), "written lower case: upper-case escapes (\\S, \\W) mean otherwise"
        self._any_case, self._lower = re.compile(pattern, re.IGNORECASE), re.compile(pattern)

    def found(self, line: str) -> bool:
        if line.isascii():
            return self._lower.search(line.lower()) is not None
        return self._any_case.search(line) is not None


# Lines that come with an error but identify none: advice PyTorch prints under every CUDA error,
# C++ stack frames, the header of a traceback. As a signature they would make unrelated
# failures look alike.
_BOILERPLATE = re.compile(
    r"CUDA kernel errors might be asynchronously reported|CUDA_LAUNCH_BLOCKING=1|TORCH_USE_CUDA_DSA"
    r"|^\s*frame #\d+|^\s*Exception raised from |^\s*Traceback \(most recent call last\)"
    r"|^\s*File \"[^\"]+\", line \d+|^\s*The above exception was the direct cause|^\s*During handling of the above"
    r"|^\s*\^+\s*$|To execute this test, run the following|Please (open|file) an issue"
    r"|^\s*(warnings\.warn|return forward_call|result = self\.forward)", re.IGNORECASE)
_ERROR_WORDS = Caseless(r"error|exception|fail|fatal|abort|killed|panic|timeout|timed out|cannot|can't|can not|unable|"
                        r"refused|denied|invalid|corrupt|mismatch|not found|no such|lost|down\b|"
                        r"unexpected|assert|segmentation|(?:do|does|must) not match|must match|terminate|nan\b|inf\b|exceeded|overflow|expected|"
                        r"warn")
# What logs put before a message: [rank3]:, [E1102 03:14:00.123 ...], node042:1234:5678 [3], "rank 3:"
_PREFIX = re.compile(r"^(?:\s*(?:\[[^\]]*\]|[\w.-]+:\d+:\d+|rank\s*\d+|node[\w-]*)\s*:?)+\s*", re.IGNORECASE)


def without_prefix(line: str) -> str:
    """The message of a log line, without the rank, host and timestamp brackets before it."""
    return _PREFIX.sub("", line, count=1)


# words one of the _BOILERPLATE shapes needs: a line with none of them is not boilerplate, and
# finding that out by substring tests is much cheaper than by the regular expression
_BOILERPLATE_WORDS = ("cuda kernel errors", "cuda_launch_blocking", "torch_use_cuda_dsa", "frame #", "exception raised",
                      "traceback", "file \"", "above exception", "during handling", "^", "to execute this test",
                      "an issue", "warnings.warn", "forward_call", "self.forward")
_ANY_BOILERPLATE_WORD = any_of(_BOILERPLATE_WORDS)


def is_boilerplate(line: str) -> bool:
    """Whether a line accompanies errors without identifying one (see _BOILERPLATE)."""
    lower = line.lower()
    return _ANY_BOILERPLATE_WORD.search(lower) is not None and bool(_BOILERPLATE.search(line))


def looks_like_an_error(line: str) -> bool:
    """Whether a line says something failed: the only lines worth grouping by their words
    (a healthy step line pasted as context would make every incident look alike)."""
    return _ERROR_WORDS.found(line) and not is_boilerplate(line)


# A training framework's progress report ("iteration 7010/159576 | lm loss: 6.4 | grad norm: nan |",
# "step 1200 | loss 2.31 | lr 3e-4"): pasted as context, it tells nothing about which failure it was.
# (also matched by tooling watch over whole buffers with Hyperscan: keep it in the subset both read)
PROGRESS = (r"\b(?:iteration|iter|step|global_step)\s*[:=]?\s*\d+\s*(?:/\s*\d+)?\s*[|,]"
            r"|\|\s*(?:lm )?loss[: ]")
_PROGRESS = Caseless(PROGRESS)


def is_progress(line: str) -> bool:
    """Whether a line is a progress report of the training loop, not an error message."""
    return _PROGRESS.found(line)
