"""The YAML loader of records: libyaml with safe constructors, and the guards that refuse what a
record must not hold (duplicate keys, alias bombs, unsafe tags, huge or infinite numbers,
escaped control characters). Used by loading (tooling.records.load) and by locating
(tooling.records.locate), which composes the same way."""
from __future__ import annotations

import math
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from tooling.records.characters import first_bad
from tooling.records.findings import excerpt

MAX_EXPANDED_NODES = 100_000  # alias expansion bound ("billion laughs")
MAX_INTEGER = 2**63 - 1  # what any consumer (JSON, numpy, a database) holds; more is a typo or an attack

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class RecordLoader(yaml.CSafeLoader):
    """libyaml + safe constructors; timestamps stay strings, duplicate keys are errors."""

    # Timestamps stay text so that the JSON Schema can check them and offsets are never lost.
    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
        for first, resolvers in yaml.CSafeLoader.yaml_implicit_resolvers.items()
    }

    # Only JSON-shaped data: binary, sets and ordered pairs have no place in a record.
    yaml_constructors = {
        tag: constructor for tag, constructor in yaml.CSafeLoader.yaml_constructors.items()
        if tag not in {f"tag:yaml.org,2002:{t}" for t in ("binary", "set", "omap", "pairs")}
    }

    def construct_yaml_int(self, node: ScalarNode) -> int:
        if len(node.value) <= 18:  # the common case: small enough to need no check
            return super().construct_yaml_int(node)
        text = str(node.value).replace("_", "").lstrip("+-")
        # int() of thousands of digits is slow and then refused (ValueError): stop well before
        if len(text) > 40 or abs(value := super().construct_yaml_int(node)) > MAX_INTEGER:
            raise InvalidNumberError(problem=f"integer {excerpt(str(node.value), 24)} is too large; "
                                     f"expected a whole number of at most {MAX_INTEGER:,}",
                                     problem_mark=node.start_mark)
        return value

    def construct_yaml_float(self, node: ScalarNode) -> float:
        value = super().construct_yaml_float(node)
        if not math.isfinite(value):
            raise InvalidNumberError(problem=f"{excerpt(str(node.value), 24)} is not a finite number; "
                                     "expected a finite number", problem_mark=node.start_mark)
        return value

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        own = node.value  # merge keys (<<) replace node.value with a longer list
        mapping = super().construct_mapping(node, deep=deep)
        if len(mapping) != len(own) or node.value is not own:  # only then can a key repeat
            _reject_duplicate_keys(own)
        return mapping


RecordLoader.add_constructor("tag:yaml.org,2002:int", RecordLoader.construct_yaml_int)
RecordLoader.add_constructor("tag:yaml.org,2002:float", RecordLoader.construct_yaml_float)


class DuplicateKeyError(yaml.MarkedYAMLError):
    pass


class InvalidNumberError(yaml.MarkedYAMLError):
    pass


class InvalidCharacterError(yaml.MarkedYAMLError):
    pass


class AliasBombError(yaml.MarkedYAMLError):
    pass


def _reject_duplicate_keys(pairs: list[tuple[Node, Node]]) -> None:
    seen: dict[str, Node] = {}
    for key_node, _ in pairs:
        if not isinstance(key_node, ScalarNode):
            continue
        first = seen.setdefault(key_node.value, key_node)
        if first is not key_node:
            line = first.start_mark.line + 1
            raise DuplicateKeyError(
                problem=f"duplicate key {excerpt(str(key_node.value))} (first defined at line {line}); "
                "expected each key once per mapping",
                problem_mark=key_node.start_mark,
            )


def check_alias_expansion(root: Node) -> None:
    """Fail on recursive aliases, or when expanding aliases would exceed MAX_EXPANDED_NODES."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node: Node) -> int:
        known = sizes.get(id(node))
        if known is not None:
            return known
        if id(node) in active:
            raise AliasBombError(problem="alias refers to itself; expected data without "
                                 "recursive aliases", problem_mark=node.start_mark)
        active.add(id(node))
        total = 1
        if isinstance(node, SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        if total > MAX_EXPANDED_NODES:
            raise AliasBombError(
                problem=f"aliases expand to more than {MAX_EXPANDED_NODES:,} nodes; "
                "expected a record without alias bombs (write the values out)",
                problem_mark=node.start_mark,
            )
        active.discard(id(node))
        sizes[id(node)] = total
        return total

    size(root)




def check_escaped(data: Any, node: Node) -> None:
    """Strings built from escapes are held to the same characters as the file's own text."""
    if isinstance(node, ScalarNode) and isinstance(data, str):
        bad = first_bad(data)
        if bad is not None:
            raise InvalidCharacterError(problem=f"escaped {bad[1]}", problem_mark=node.start_mark)
    elif isinstance(node, SequenceNode) and isinstance(data, list):
        for child, value in zip(node.value, data):
            check_escaped(value, child)
    elif isinstance(node, MappingNode) and isinstance(data, dict):
        for key_node, value_node in node.value:
            key = data.get(key_node.value) if isinstance(key_node, ScalarNode) else None
            check_escaped(key_node.value, key_node)
            check_escaped(key, value_node)
