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
from tooling.records.reading import MAX_FILE_BYTES

MAX_EXPANDED_NODES = 100_000  # alias expansion bound ("billion laughs")
MAX_EXPANDED_BYTES = MAX_FILE_BYTES  # and in text: aliases never make a record larger than a file may be
MAX_INTEGER = 2**63 - 1  # what any consumer (JSON, numpy, a database) holds; more is a typo or an attack

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_MAX_DIGITS = 40  # written digits (any base) past which a whole number is refused before it is converted


def too_many_digits(written: str) -> bool:
    """Whether a whole number as written is too long to convert: int() of thousands of digits is
    slow, then refused by Python in its own words. Far more than MAX_INTEGER needs, so that a
    number written in another base or with separators is still converted and checked."""
    return len(written.replace("_", "").lstrip("+-")) > _MAX_DIGITS


def integer_too_large(written: str) -> str:
    return f"integer {excerpt(written, 24)} is too large; expected a whole number of at most {MAX_INTEGER:,}"


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
        if too_many_digits(str(node.value)) or abs(value := super().construct_yaml_int(node)) > MAX_INTEGER:
            raise InvalidNumberError(problem=integer_too_large(str(node.value)), problem_mark=node.start_mark)
        return value

    def construct_yaml_float(self, node: ScalarNode) -> float:
        value = super().construct_yaml_float(node)
        if not math.isfinite(value):
            raise InvalidNumberError(problem=f"{excerpt(str(node.value), 24)} is not a finite number; "
                                     "expected a finite number", problem_mark=node.start_mark)
        return value

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        own = node.value  # merge keys (<<) replace node.value with a longer list
        self.flatten_mapping(node)  # what SafeConstructor does first, so that merged keys are checked too
        _reject_keys_not_text(node.value)  # before any key is built: a list as a key fails there, unlocated
        mapping = yaml.constructor.BaseConstructor.construct_mapping(self, node, deep=deep)
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


class InvalidKeyError(yaml.MarkedYAMLError):
    pass


_STR_TAG = "tag:yaml.org,2002:str"
_NOT_TEXT = {f"tag:yaml.org,2002:{tag}": what for tag, what in
             (("null", "null"), ("bool", "true or false"), ("int", "a number"), ("float", "a number"))}


def _reject_keys_not_text(pairs: list[tuple[Node, Node]]) -> None:
    """A record is JSON-shaped: every key is text (``~:`` is a null key, ``1:`` a number)."""
    for key_node, _ in pairs:
        if isinstance(key_node, ScalarNode) and key_node.tag == _STR_TAG:
            continue
        if isinstance(key_node, ScalarNode) and key_node.value:
            shown = excerpt(str(key_node.value))
            problem = (f"key {shown} is {_NOT_TEXT.get(key_node.tag, key_node.tag)}, not text; "
                       f"expected a text key (written in quotes if {shown} is meant)")
        elif isinstance(key_node, ScalarNode):
            problem = "an empty key is null, not text; expected a text key"
        else:
            problem = f"key is {'a list' if isinstance(key_node, SequenceNode) else 'a mapping'}, not text; " \
                      "expected a text key"
        raise InvalidKeyError(problem=problem, problem_mark=key_node.start_mark)


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
    """Fail on recursive aliases, or when expanding aliases would exceed MAX_EXPANDED_NODES nodes
    or MAX_EXPANDED_BYTES bytes of text. Counted on the composed nodes, where an alias is one
    shared node, before any expanded value is built: 4,000 aliases of one 200,000-character
    string cost 4,000 additions here, and would cost 800 MB in every consumer of the record."""
    sizes: dict[int, tuple[int, int]] = {}
    active: set[int] = set()

    def size(node: Node) -> tuple[int, int]:
        known = sizes.get(id(node))
        if known is not None:
            return known
        if id(node) in active:
            raise AliasBombError(problem="alias refers to itself; expected data without "
                                 "recursive aliases", problem_mark=node.start_mark)
        active.add(id(node))
        children = [] if isinstance(node, ScalarNode) else (
            node.value if isinstance(node, SequenceNode) else [n for pair in node.value for n in pair])
        nodes, text = 1, (len(node.value.encode("utf-8")) if isinstance(node, ScalarNode) else 0)
        for child in children:
            child_nodes, child_text = size(child)
            nodes, text = nodes + child_nodes, text + child_text
        _check_expanded(node, nodes, text)
        active.discard(id(node))
        sizes[id(node)] = nodes, text
        return nodes, text

    size(root)


def _check_expanded(node: Node, nodes: int, text: int) -> None:
    if nodes > MAX_EXPANDED_NODES:
        raise AliasBombError(problem=f"aliases expand to more than {MAX_EXPANDED_NODES:,} nodes; "
                             "expected a record without alias bombs (write the values out)",
                             problem_mark=node.start_mark)
    if text > MAX_EXPANDED_BYTES:
        raise AliasBombError(problem=f"aliases expand to more than {MAX_EXPANDED_BYTES:,} bytes of text; "
                             "expected a record whose values, written out, fit in a record file (1 MiB)",
                             problem_mark=node.start_mark)


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
