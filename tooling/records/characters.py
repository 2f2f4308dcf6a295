"""Characters no record may hold, found at the speed of a regular expression.

C0 controls but tab, line feed and carriage return; DEL and the C1 controls (NEL among them,
which YAML silently reads as a line break); the Unicode line and paragraph separators;
noncharacters (U+FDD0..U+FDEF and the last two code points of every plane); lone surrogates
(what invalid UTF-8 in a command-line argument becomes). Tabs have their own rule.
"""
from __future__ import annotations

import re

_ASCII = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BMP = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufdd0-\ufdef\ufffe\uffff\ud800-\udfff]")
# A class of big ranges is slow to scan, so the planes above the first get their own, used only
# for text that has such characters at all (checked by the length of its UTF-16 form).
_ASTRAL = re.compile("[" + "".join(rf"\U{plane:04x}fffe\U{plane:04x}ffff" for plane in range(1, 17)) + "]")
# An escape in a double-quoted YAML string that can spell one of them: \0 \a \b \v \f \e \N \L
# \P and the numeric escapes.
ESCAPES = re.compile(r"\\[0abvfeNLPxuU]")

_NAMES = {0x00: "NUL", 0x1B: "ESC", 0x7F: "DEL", 0x85: "NEL, a C1 line break",
          0x2028: "LINE SEPARATOR", 0x2029: "PARAGRAPH SEPARATOR"}


def first_bad(text: str) -> tuple[int, str] | None:
    """(index, message) of the first character no record may hold, or None."""
    if text.isascii():
        found = _ASCII.search(text)
        return (found.start(), message(ord(found.group(0)))) if found else None
    hits = [m for m in (_BMP.search(text), _astral(text)) if m is not None]
    if not hits:
        return None
    first = min(hits, key=lambda m: m.start())
    return first.start(), message(ord(first.group(0)))


def _astral(text: str) -> re.Match[str] | None:
    if len(text.encode("utf-16-le", "surrogatepass")) == 2 * len(text):
        return None  # nothing above U+FFFF
    return _ASTRAL.search(text)


def message(code: int) -> str:
    name = _NAMES.get(code) or ("a control character" if code < 0xA0 else
                                "a lone surrogate" if 0xD800 <= code <= 0xDFFF else "a noncharacter")
    return f"character U+{code:04X} ({name}); expected printable text"
