"""Keys whose error words differ by a word: the same message naming another parameter or tensor.

Keys of error words (see :mod:`tooling.analysis.identity`) are compared token-wise, not as whole
strings: "annealinglr class input value and checkpointvalue for learning rate" and the same with
"minimum learning rate" are one check failing on two of its parameters. Two keys are alike when
everything but their words is equal and the sets of their words overlap by ``THRESHOLD`` (with
up to ten words each, that is one word in ten changed, added or dropped); short messages must be
equal, since one word in four is often the whole failure ("unhandled cuda error" against
"unhandled system error").

Near-linear: keys are compared only within a block (the same key but its words, and the same
first words), and with at most ``PER_BLOCK`` representatives of it.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator

Key = tuple[str, ...]

THRESHOLD = 0.8  # |shared words| / |all words|
LEAD = 3  # the first words, which name the error, must be the same
PER_BLOCK = 32  # representatives compared per block: bounded work even for adversarial input


def _words(key: Key) -> tuple[Key, str] | None:
    """The key without its words, and its words; None for a key of no words (a mode and codes)."""
    if key[0] == "text":
        return key[:1], key[1]
    at = next((i for i, part in enumerate(key) if part.startswith("message=")), None)
    if at is None:
        return None
    return (*key[:at], "message", *key[at + 1:]), key[at].split("=", 1)[1]


def words_of(key: Key) -> str:
    """The error words of a key that has them."""
    split = _words(key)
    assert split is not None, "only keys of words are ever alike"
    return split[1]


def alike(keys: Iterable[Key]) -> Iterator[tuple[Key, Key]]:
    """(key, an earlier alike key), for each key alike to one seen before it in ``keys``."""
    blocks: dict[tuple[Key, str], list[tuple[Key, frozenset[str]]]] = {}
    for key in dict.fromkeys(keys):
        split = _words(key)
        if split is None:
            continue
        rest, words = split
        tokens = words.split()
        block = blocks.setdefault((rest, " ".join(tokens[:LEAD])), [])
        own = frozenset(tokens)
        match = next((k for k, seen in block if len(own & seen) >= THRESHOLD * len(own | seen)), None)
        if match is not None:
            yield key, match
        elif len(block) < PER_BLOCK:
            block.append((key, own))
