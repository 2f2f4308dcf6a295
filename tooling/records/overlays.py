"""Overlays: the text of a ladder or of the stack cross-section in another language.

``runbooks/ladders/crash.ko.yaml`` carries the Korean text of ``runbooks/ladders/crash.yaml``,
``runbooks/stack.ko.yaml`` that of ``runbooks/stack.yaml``. An overlay holds only the text
fields, in the English record's structure: steps in the same order, layers named by their layer
id, failure modes and signals in the same order. Commands, costs, the layers a step clears and
what a step requires are read from the English record alone, so a translation can never make
them drift. :data:`SHAPES` is the one description of what is text; the rules (overlay_rules.py)
and the merge below both walk it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from tooling.records.model import Record


@dataclass(frozen=True)
class Items:
    """A list of the record: items matched by position, or by the value of ``key``."""

    noun: str  # how a message names one item: "step", "layer"
    key: str | None = None
    shape: Shape | None = None  # None: each item is a text itself (a failure mode's signals)


@dataclass(frozen=True)
class Shape:
    """The text fields of a mapping, and its lists whose items hold text."""

    texts: tuple[str, ...] = ()
    lists: dict[str, Items] = field(default_factory=dict)


_STEP = Shape(("name", "expect", "look_for", "next"))
_FAILURE_MODE = Shape(("mode", "cheapest_check"), {"signals": Items("signal")})
_LAYER = Shape(("name", "what"), {"failure_modes": Items("failure mode", shape=_FAILURE_MODE)})

# English kind -> what of it an overlay translates.
SHAPES: dict[str, Shape] = {
    "ladder": Shape(("title", "summary"), {"steps": Items("step", shape=_STEP)}),
    "stack": Shape(("title", "summary"), {"layers": Items("layer", key="layer", shape=_LAYER)}),
}


@dataclass
class Pairing:
    """How the items of an overlay list line up with the English ones (indexes into each)."""

    pairs: list[tuple[int, int]] = field(default_factory=list)  # (English, overlay)
    missing: list[int] = field(default_factory=list)  # English items the overlay lacks
    extra: list[tuple[int, int | None]] = field(default_factory=list)  # (overlay item, its first twin or None)


def key_of(item: Any, items: Items) -> Any:
    return item.get(items.key) if items.key is not None and isinstance(item, dict) else None


def pair(english: list[Any], overlay: list[Any], items: Items) -> Pairing:
    """Line up two lists: by position, or by the key field (an overlay may list layers in any order)."""
    result = Pairing()
    if items.key is None:
        result.pairs = aligned(english, overlay, items)
        result.missing = sorted(set(range(len(english))) - {e for e, _ in result.pairs})
        result.extra = [(o, None) for o in sorted(set(range(len(overlay))) - {o for _, o in result.pairs})]
        return result
    where = {key_of(e, items): i for i, e in reversed(list(enumerate(english)))}
    seen: dict[Any, int] = {}
    for i, item in enumerate(overlay):
        key = key_of(item, items)
        if key in seen or key not in where:
            result.extra.append((i, seen.get(key)))
        else:
            seen[key] = i
            result.pairs.append((where[key], i))
    result.missing = [i for i, e in enumerate(english) if key_of(e, items) not in seen]
    return result


_ASCII = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/=+-]*")  # commands, codes, log words: kept as they are


def _tokens(item: Any, items: Items) -> set[str]:
    return {w.lower().rstrip(".:") for text in item_texts(item, items) for w in _ASCII.findall(text)}


def aligned(english: list[Any], overlay: list[Any], items: Items) -> list[tuple[int, int]]:
    """Pairs (English, overlay) of two positional lists. Of equal length: item N with item N. Else
    the order-keeping pairing that shares the most untranslated words (commands, error codes, log
    lines, step numbers stay as they are in a translation), so that a step left out in the
    middle is reported as that step, and the steps after it still get their own translation."""
    n, m = len(english), len(overlay)
    if n == m:
        return [(i, i) for i in range(n)]
    ours = [_tokens(o, items) for o in overlay]
    theirs = [_tokens(e, items) for e in english]
    # best[i][j]: score of pairing english[i:] with overlay[j:]; a pair always earns a little,
    # so that as many items pair as possible, and an early pair wins a tie (gaps go last)
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            shared = len(theirs[i] & ours[j]) / max(1, len(ours[j]))
            best[i][j] = max(best[i + 1][j + 1] + 1 + shared, best[i + 1][j], best[i][j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        shared = len(theirs[i] & ours[j]) / max(1, len(ours[j]))
        if best[i][j] == best[i + 1][j + 1] + 1 + shared:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


def translatable(english: Record) -> Shape | None:
    return SHAPES.get(english.kind)


def apply_overlay(english: Record, overlay: Record | None) -> Record:
    """``english`` with the overlay's text in place of its own; every field the overlay does not
    translate (a missing step, a command, a cost) stays as the English record has it."""
    shape = translatable(english)
    if overlay is None or shape is None:
        return english
    return Record(english.path, _merged(shape, english.data, overlay.data))


def _merged(shape: Shape, english: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    out = dict(english)
    for name in shape.texts:
        if name in english and isinstance(overlay.get(name), str):
            out[name] = overlay[name]
    for name, items in shape.lists.items():
        theirs, ours = english.get(name), overlay.get(name)
        if isinstance(theirs, list) and isinstance(ours, list):
            out[name] = _merged_list(items, theirs, ours)
    return out


def _merged_list(items: Items, english: list[Any], overlay: list[Any]) -> list[Any]:
    out = list(english)
    for e, o in pair(english, overlay, items).pairs:
        if items.shape is None:
            out[e] = overlay[o] if isinstance(overlay[o], str) else english[e]
        elif isinstance(english[e], dict) and isinstance(overlay[o], dict):
            out[e] = _merged(items.shape, english[e], overlay[o])
    return out


def texts(shape: Shape, data: dict[str, Any]) -> Iterator[str]:
    """Every text an overlay (or its English record) holds, for checks that read all of it."""
    for name in shape.texts:
        if isinstance(data.get(name), str):
            yield data[name]
    for name, items in shape.lists.items():
        listed = data.get(name)
        for item in listed if isinstance(listed, list) else []:
            yield from item_texts(item, items)


def item_texts(item: Any, items: Items) -> Iterator[str]:
    if items.shape is None and isinstance(item, str):
        yield item
    elif items.shape is not None and isinstance(item, dict):
        yield from texts(items.shape, item)
