"""Normalising error signatures: the same failure logged on another node, rank or day matches.

Numbers, hosts, ranks, PIDs, addresses, paths and timestamps are noise; error codes that follow
a code keyword (``Xid 79``, ``errno 28``, ``exit code 137``, ``signal 9``) are the failure.
Two regex passes per signature: one for the noise shapes, one for numbers.
"""
from __future__ import annotations

import re
from functools import lru_cache

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
    # file system paths
    ("path", r"(?<![\w.])(?:/[\w.@%+=:,~-]+)+/?"),
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


@lru_cache(maxsize=65536)
def normalise(signature: str) -> str:
    """A signature with its noise replaced, lower-cased and with spaces folded."""
    text = signature.lower()
    present = tuple(name for name, marks in _MARKERS.items() if any(m in text for m in marks))
    text = _noise_re(present).sub(_noise, text)
    if any(word in text for word in _CODE_WORDS):
        text = _NUMBERS_RE.sub(_number, text)
    else:
        text = _DIGITS.sub("#", text)
    return _SPACE.sub(" ", text).strip(" .,;:")
