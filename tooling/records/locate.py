"""Where a value of a record file is: line and column, recovered only when a finding has to
point into the file (loading keeps no positions, to stay fast). The file loaded last is kept
composed, since findings about it follow at once; a few others are composed on demand."""
from __future__ import annotations

import os
import re
from collections import OrderedDict
from typing import Sequence

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from tooling.records.findings import Finding
from tooling.records.model import Record
from tooling.records.reading import read_text
from tooling.records.yaml_loader import RecordLoader

Keys = list[str | int]  # a path into a record's data: mapping keys and list indexes

# The file loaded last (findings about it follow at once), and a few composed on demand. Only
# one tree is kept from loading: keeping more makes every garbage collection slower.
_LAST: tuple[tuple[str, int, int], Node] | None = None
_NODES: OrderedDict[tuple[str, int, int], Node | None] = OrderedDict()
_NODES_KEPT = 64


def remember_loaded(key: tuple[str, int, int] | None, node: Node | None) -> None:
    """Keep the tree of the file just loaded: findings about it are located without parsing again."""
    global _LAST
    if key is not None and node is not None:
        _LAST = (key, node)


def stat_key(path: str) -> tuple[str, int, int] | None:
    """Absolute path and stat: an edited or different file never matches an old entry."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return os.path.abspath(path), info.st_mtime_ns, info.st_size


def _remember(key: tuple[str, int, int], node: Node | None) -> None:
    _NODES[key] = node
    _NODES.move_to_end(key)
    while len(_NODES) > _NODES_KEPT:
        _NODES.popitem(last=False)


def _compose(key: tuple[str, int, int]) -> Node | None:
    if _LAST is not None and _LAST[0] == key:
        return _LAST[1]
    if key not in _NODES:
        text, problem = read_text(key[0])
        _remember(key, None if problem is not None or text is None else yaml.compose(text, Loader=RecordLoader))
    return _NODES[key]


def locate(path: str, keys: Sequence[str | int], *, at_key: bool = False) -> tuple[int, int]:
    """1-based line:col of the value at ``keys`` (or of its key), as deep as it exists."""
    key = stat_key(path)
    node = _compose(key) if key is not None else None
    if node is None:
        return 1, 1
    mark = node.start_mark
    for key in keys:
        child, key_node = _child(node, key)
        if child is None:
            break
        mark = key_node.start_mark if (at_key and key_node is not None and key == keys[-1]) else child.start_mark
        node = child
    return mark.line + 1, mark.column + 1


def finding_at(record: Record, keys: Sequence[str | int], rule: str, message: str) -> Finding:
    """An error about the value at ``keys`` of ``record``, located at its line and column."""
    return Finding(record.path, *locate(record.path, keys), rule, message)


def _child(node: Node, key: str | int) -> tuple[Node | None, Node | None]:
    if isinstance(node, MappingNode):
        return _keys(node).get(str(key), (None, None))
    if isinstance(node, SequenceNode) and isinstance(key, int) and key < len(node.value):
        return node.value[key], None
    return None, None


_INDEXES: dict[int, tuple[MappingNode, dict[str, tuple[Node, Node]]]] = {}


def _keys(node: MappingNode) -> dict[str, tuple[Node, Node]]:
    """{key: (value node, key node)}, built once per mapping: locating each of 40,000 keys
    by a linear scan would be quadratic. The first occurrence wins, as in a lookup."""
    cached = _INDEXES.get(id(node))
    if cached is None or cached[0] is not node:
        index: dict[str, tuple[Node, Node]] = {}
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode):
                index.setdefault(key_node.value, (value_node, key_node))
        if len(_INDEXES) > 4096:
            _INDEXES.clear()
        cached = _INDEXES[id(node)] = (node, index)
    return cached[1]


def locate_top(path: str, key: str) -> tuple[int, int]:
    """1-based line:col of a top-level key, found in the text without composing the file (a
    suggestion for each of 10,000 records must not parse each again); :func:`locate` when the
    record is not written in block style."""
    text, _ = read_text(path)
    found = re.search(rf"^{re.escape(key)}\s*:", text or "", re.MULTILINE)
    if found is None:
        return locate(path, [key], at_key=True)
    return text.count("\n", 0, found.start()) + 1, 1  # type: ignore[union-attr]


def locate_text(path: str, keys: Sequence[str | int], needle: str) -> tuple[int, int]:
    """Where ``needle`` first appears in the value at ``keys`` (folded text may span lines)."""
    line, col = locate(path, keys)
    text, _ = read_text(path)
    if text is None or not needle:
        return line, col
    lines = text.splitlines()
    for number in range(line - 1, min(len(lines), line + 200)):
        start = col - 1 if number == line - 1 else 0
        found = lines[number].lower().find(needle.lower(), start)
        if found >= 0:
            return number + 1, found + 1
    return line, col
