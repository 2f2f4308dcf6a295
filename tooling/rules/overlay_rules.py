"""Rules between an overlay and the English record it translates (warnings; errors with --strict).

- ``overlay-unknown``: something the English record does not have: no English record of that id,
  a step past its last one, a layer it does not list (or one listed twice), text where the
  English item has none. A translation of nothing is a stale or misspelled one.
- ``overlay-missing``: something of the English record the overlay does not translate: a step,
  a layer, a failure mode, a signal, a text field. The page then shows the English text.

Each finding is located in the overlay and names the English text it is about (file:line:col),
so that a translator finds both halves at once.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Iterator

from tooling.messages import counted
from tooling.records.findings import Finding, Severity
from tooling.records.kinds import KINDS
from tooling.records.locate import Keys, locate
from tooling.records.model import Record
from tooling.records.overlays import Items, Shape, key_of, pair, translatable



class _Walk:
    """One overlay compared with its English record; yields the findings."""

    def __init__(self, english: Record, overlay: Record) -> None:
        self.english, self.overlay = english, overlay
        self.name = os.path.basename(english.path)

    def finding(self, keys: Keys, rule: str, message: str, *, at_key: bool = False) -> Finding:
        return Finding(self.overlay.path, *locate(self.overlay.path, keys, at_key=at_key), rule, message,
                       Severity.WARNING)

    def english_at(self, keys: Keys) -> str:
        line, col = locate(self.english.path, keys)
        return f"{self.name}:{line}:{col}"

    def mapping(self, shape: Shape, theirs: dict[str, Any], ours: dict[str, Any], where: tuple[Keys, Keys],
                label: str) -> Iterator[Finding]:
        en_keys, keys = where
        for name in (*shape.texts, *shape.lists):
            if name in theirs and name not in ours:
                yield self.finding(keys, "overlay-missing", f"{label} has no '{name}'; expected the translation "
                                   f"of {self.english_at([*en_keys, name])}")
            elif name in ours and name not in theirs:
                yield self.finding([*keys, name], "overlay-unknown", f"{label} has '{name}' but the English text "
                                   f"({self.name}) has none; expected only text that translates English text",
                                   at_key=True)
        for name, items in shape.lists.items():
            if isinstance(theirs.get(name), list) and isinstance(ours.get(name), list):
                yield from self.items(items, theirs[name], ours[name], ([*en_keys, name], [*keys, name]),
                                      None if not keys else label)

    def items(self, items: Items, theirs: list[Any], ours: list[Any], where: tuple[Keys, Keys],
              outer: str | None) -> Iterator[Finding]:
        en_keys, keys = where
        lined = pair(theirs, ours, items)
        for e in lined.missing:
            yield self.finding(keys, "overlay-missing", f"{self.label(items, theirs, e, outer)} is not translated; "
                               f"expected the translation of {self.english_at([*en_keys, e])}", at_key=True)
        for o, twin in lined.extra:
            yield self.extra(items, theirs, ours, o, twin, keys, outer)
        if items.shape is None:
            return
        for e, o in lined.pairs:
            if isinstance(theirs[e], dict) and isinstance(ours[o], dict):
                yield from self.mapping(items.shape, theirs[e], ours[o], ([*en_keys, e], [*keys, o]),
                                        self.label(items, theirs, e, outer))

    def extra(self, items: Items, theirs: list[Any], ours: list[Any], index: int, twin: int | None,
              keys: Keys, outer: str | None) -> Finding:
        if items.key is None:
            count = counted(len(theirs), items.noun)
            return self.finding([*keys, index], "overlay-unknown",
                                f"{self.label(items, ours, index, outer)} is not in {self.name} (it has {count}); "
                                f"expected only the {items.noun}s of the English text")
        where = [*keys, index, items.key]
        label = self.label(items, ours, index, outer)
        if twin is not None:
            line, _ = locate(self.overlay.path, [*keys, twin])
            return self.finding(where, "overlay-unknown",
                                f"{label} is translated twice (first at line {line}); expected each {items.noun} once")
        known = ", ".join(str(key_of(e, items)) for e in theirs)
        return self.finding(where, "overlay-unknown",
                            f"{label} is not in {self.name}; expected one of its {items.noun}s: {known}")

    @staticmethod
    def label(items: Items, of: list[Any], index: int, outer: str | None) -> str:
        """'step 3', 'layer 'nccl'', 'signal 2 of failure mode 1 of layer 'nccl''."""
        own = f"{items.noun} '{key_of(of[index], items)}'" if items.key else f"{items.noun} {index + 1}"
        return own if outer is None else f"{own} of {outer}"


def check_overlays(records: list[Record], english: Callable[[str, str], Record | None]) -> Iterator[Finding]:
    """overlay-unknown and overlay-missing for every overlay among ``records``; ``english`` gives
    the record of a kind and id (:meth:`tooling.rules.others.Others.named`), or None."""
    for record in records:
        translates = KINDS[record.kind].translates
        if translates is None:
            continue
        original = english(translates, record.id)
        if original is None:
            folder = KINDS[translates].directory
            yield Finding(record.path, *locate(record.path, ["id"]), "overlay-unknown",
                          f"no {translates} '{record.id}' to translate; expected the id of an English "
                          f"{translates} ({folder}/{record.id}.yaml)", Severity.WARNING)
            continue
        shape = translatable(original)
        if shape is not None and isinstance(original.data, dict):
            yield from _Walk(original, record).mapping(shape, original.data, record.data, ([], []), "the overlay")
