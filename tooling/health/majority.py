"""The odd node out: which nodes of a job differ from the others in a version, by majority rule.

For each field compared, the value most nodes hold is the reference and every node holding
another is named (:class:`Odd`); where two values or more are held by the most nodes there is no
reference to hold a node to, and the tie is named as such (:class:`Tie`), every value with its
nodes. A pinned value (``--expect nccl=2.18.5``, the run's image) is the reference whatever the
nodes hold: each node holding another is named, even when they all agree.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Sequence, TypeVar

V = TypeVar("V")


@dataclass(frozen=True)
class Odd:
    field: str
    node: str
    value: str
    reference: str  # the value it was held to
    holders: tuple[str, ...]  # the nodes that hold the reference (none for a pinned value no node holds)
    pinned: bool  # the reference was given (--expect), not the nodes' majority
    majority: bool  # the holders are more than half of the nodes (else only the most)


@dataclass(frozen=True)
class Tie:
    field: str
    groups: tuple[tuple[str, tuple[str, ...]], ...]  # (value, its nodes), most nodes first, then by value


def compare(values: Mapping[str, Mapping[str, str]], fields: Sequence[str],
            pinned: Mapping[str, str] | None = None) -> list[Odd | Tie]:
    """``values``: node -> field -> value. The findings, field by field in the order of
    ``fields``, each field's nodes in the order of ``values``."""
    found: list[Odd | Tie] = []
    for field in fields:
        held = {node: given[field] for node, given in values.items() if field in given}
        if field in (pinned or {}):
            found += _held_to(field, held, (pinned or {})[field], pinned=True)
            continue
        groups = _groups(held)
        if len(groups) < 2:
            continue
        if len(groups[0][1]) == len(groups[1][1]):
            found.append(Tie(field, tuple(groups)))
            continue
        found += _held_to(field, held, groups[0][0], pinned=False)
    return found


def _groups(held: Mapping[str, V]) -> list[tuple[V, tuple[str, ...]]]:
    """Each value with its nodes, most nodes first (then by value, so that the order is the same
    whatever the order of the nodes)."""
    counts = Counter(held.values())
    order = sorted(counts, key=lambda v: (-counts[v], str(v)))
    return [(value, tuple(node for node, v in held.items() if v == value)) for value in order]


def _held_to(field: str, held: Mapping[str, str], reference: str, *, pinned: bool) -> list[Odd]:
    holders = tuple(node for node, value in held.items() if value == reference)
    majority = 2 * len(holders) > len(held)
    return [Odd(field, node, value, reference, holders, pinned, majority)
            for node, value in held.items() if value != reference]
