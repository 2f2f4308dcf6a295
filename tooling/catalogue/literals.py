"""A pattern whose language is a few strings, handed to Hyperscan as those strings.

Hyperscan looks for a literal factor of each pattern first and checks the rest only where the
factor occurs; it picks the factor itself, and for a pattern such as
``loss['"]? ?(is|=|:)? ?(nan|inf|infinity)\\b`` it picks ``loss`` or ``inf``, one on every progress
line of a training log and the other on every ``NCCL INFO`` line (matching is caseless). Written
out as its 135 strings (``loss nan``, ``loss: inf``, ...) the same pattern costs nothing: each
string is a long literal that real lines rarely hold. So :func:`spelled_out` enumerates a
pattern's language when it is finite and small, keeping a leading or trailing assertion (``\\b``,
``^``, ``$``) around the alternation; the result matches exactly where the pattern does, and any
pattern it cannot spell out (an unbounded repeat, a wide class, a lookaround) is left as it is.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from re import _constants as sre, _parser as sre_parse  # type: ignore[attr-defined]  # (re's own parser)
from typing import Any

LIMIT = 512  # strings at most: more would only trade one cost for another
CLASS = 8  # characters of a class spelled out (``['"]``, ``[ _]``), not ``[a-z]``
ASSERTIONS = (sre.AT_BEGINNING, sre.AT_END, sre.AT_BOUNDARY)


def any_of(words: Iterable[str]) -> re.Pattern[str]:
    """One expression that finds any of ``words`` as written: a text is scanned once, where a
    test per word (``any(w in text for w in words)``) scans it once for each."""
    return re.compile("|".join(map(re.escape, words)))


class _Open(Exception):
    """The language is not a small finite set."""


def spelled_out(pattern: str) -> str:
    """For a caseless matcher, ``pattern`` as an alternation of the strings it matches (its
    assertions around it), or ``pattern`` itself when that is not a small finite set or would
    give Hyperscan no longer literal to look for."""
    try:
        parsed = sre_parse.parse(pattern)
    except re.error:
        return pattern
    if parsed.state.flags & ~re.UNICODE:  # (?x), (?s), (?i): not worth reading their way
        return pattern
    items = list(parsed)
    lead = _assertion(items[0]) if items else ""
    trail = _assertion(items[-1]) if len(items) > 1 else ""
    body = items[bool(lead):len(items) - bool(trail)]
    try:
        strings = _sequence(body)
    except _Open:
        return pattern
    if len(strings) < 2 or min(map(len, strings)) < 4:
        return pattern  # one string already is a literal; a short one is no better a factor
    return f"{lead}(?:{'|'.join(_escape(s) for s in sorted(strings))}){trail}"


def _assertion(item: tuple[Any, Any]) -> str:
    op, av = item
    if op is sre.AT and av in ASSERTIONS:
        return {sre.AT_BEGINNING: "^", sre.AT_END: "$", sre.AT_BOUNDARY: r"\b"}[av]
    return ""


def _sequence(items: list[tuple[Any, Any]]) -> set[str]:
    strings = {""}
    for item in items:
        choices = _item(*item)
        strings = {s + c for s in strings for c in choices}
        if len(strings) > LIMIT:
            raise _Open
    return strings


def _item(op: Any, av: Any) -> set[str]:
    if op is sre.LITERAL:
        return {_fold(chr(av))}
    if op is sre.IN:
        return _class(av)
    if op is sre.BRANCH:
        return {s for branch in av[1] for s in _sequence(list(branch))}
    if op is sre.SUBPATTERN:
        _, added, removed, body = av
        if added or removed:
            raise _Open
        return _sequence(list(body))
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
        low, high, body = av
        if high > 3:  # (MAXREPEAT included) not spelled out
            raise _Open
        return {s for count in range(low, high + 1) for s in _sequence(list(body) * count)}
    raise _Open


def _class(items: list[tuple[Any, Any]]) -> set[str]:
    chars: set[str] = set()
    for op, av in items:
        if op is sre.LITERAL:
            chars.add(_fold(chr(av)))
        elif op is sre.RANGE and av[1] - av[0] < CLASS:
            chars.update(_fold(chr(c)) for c in range(av[0], av[1] + 1))
        else:
            raise _Open  # a category (\d, \s), a negation or a wide range
    if len(chars) > CLASS:
        raise _Open
    return chars


def _fold(char: str) -> str:
    """Hyperscan matches caselessly in ASCII only: ``E`` and ``e`` are one string to it."""
    return char.lower() if char.isascii() else char


def _escape(text: str) -> str:
    return "".join(c if c.isascii() and c.isalnum() else f"\\x{ord(c):02x}" if c.isascii() else c for c in text)
