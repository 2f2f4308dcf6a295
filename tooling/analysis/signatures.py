"""Normalising error signatures: the same failure logged on another node, rank or day matches.

Numbers, hosts, ranks, PIDs, addresses, paths and timestamps are noise; error codes that follow
a code keyword (``Xid 79``, ``errno 28``, ``exit code 137``, ``signal 9``) are the failure.
"""
from __future__ import annotations

import re
from functools import lru_cache

_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), r) for p, r in (
    # NVRM's "Xid (PCI:0000:ca:00): 79, pid=..." keeps its code next to the word Xid
    (r"xid\s*\(pci:[^)]*\)\s*:?\s*(\d+)", r"xid \1"),
    # timestamps: ISO 8601, syslog "Nov 29 10:00:01", dmesg "[12345.678901]", clock times
    (r"\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(z|[+-]\d{2}:?\d{2})?", "<time>"),
    (r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\s+\d{1,2}\s+\d{2}:\d{2}(:\d{2})?", "<time>"),
    (r"\[\s*\d+\.\d+\]", "<time>"),
    (r"\b\d{2}:\d{2}:\d{2}(\.\d+)?\b", "<time>"),
    # addresses: PCI bus ids, IPs, UUIDs, hex
    (r"\b([0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}(\.[0-9a-f])?\b", "<pci>"),
    (r"\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b", "<ip>"),
    (r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "<uuid>"),
    (r"\b0x[0-9a-f]+\b", "<hex>"),
    (r"\b[0-9a-f]*\d[0-9a-f]*[a-f][0-9a-f]*\b", "<hex>"),
    # file system paths
    (r"(?<![\w.])(/[\w.@%+=:,~-]+)+/?", "<path>"),
))
# Numbers after these words are error codes and stay; every other number is noise.
_CODE = re.compile(r"\b(xid|errno|error|err|code|status|signal|sig)\b[\s:=#]*(\d+)", re.IGNORECASE)
_NUMBER = re.compile(r"\d+")
_PRIVATE = re.compile("[\ue000-\uf8ff]")
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=65536)
def normalise(signature: str) -> str:
    """A signature with its noise replaced, lower-cased and with spaces folded."""
    text = _PRIVATE.sub("", signature.lower())
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    codes: list[str] = []

    def keep(match: re.Match[str]) -> str:
        codes.append(match.group(2))
        return f"{match.group(1)} {chr(0xE000 + len(codes) - 1)}"

    text = _NUMBER.sub("#", _CODE.sub(keep, text))
    text = _PRIVATE.sub(lambda m: codes[ord(m.group()) - 0xE000], text)
    return _SPACE.sub(" ", text).strip(" .,;:")
