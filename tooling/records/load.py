"""Reading record files safely: the only module that touches YAML syntax.

The fast path is libyaml (``CSafeLoader``) with guards that cost almost nothing on a valid
file; positions (line:col of any value) are recovered by :func:`locate`, which re-composes
the file only when a finding has to point into it.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Sequence

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from tooling.records.findings import Finding

MAX_FILE_BYTES = 1 << 20  # a record is a page of text; anything larger is a mistake or an attack
MAX_EXPANDED_NODES = 100_000  # alias expansion bound ("billion laughs")

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class _RecordLoader(yaml.CSafeLoader):
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

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        own = node.value  # merge keys (<<) replace node.value with a longer list
        mapping = super().construct_mapping(node, deep=deep)
        if len(mapping) != len(own) or node.value is not own:  # only then can a key repeat
            _reject_duplicate_keys(own)
        return mapping


class DuplicateKeyError(yaml.MarkedYAMLError):
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
                problem=f"duplicate key '{key_node.value}' (first defined at line {line}); "
                "expected each key once per mapping",
                problem_mark=key_node.start_mark,
            )


def _check_alias_expansion(root: Node) -> None:
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


@dataclass
class Loaded:
    """The result of reading one file: plain data, or the findings that stopped it."""

    path: str
    data: Any = None
    findings: list[Finding] = field(default_factory=list)


def _at(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    col = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, col


def read_text(path: str) -> tuple[str | None, Finding | None]:
    """File text, or the finding that explains why it cannot be read as a record."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return None, Finding(path, 1, 1, "unreadable", f"cannot read file: {exc.strerror}")
    if len(raw) > MAX_FILE_BYTES:
        return None, Finding(path, 1, 1, "file-too-large",
                             f"file is larger than {MAX_FILE_BYTES:,} bytes; "
                             "expected a record of at most 1 MiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = raw[: exc.start].decode("utf-8", errors="replace")
        line, col = _at(good, len(good))
        return None, Finding(path, line, col, "not-utf8",
                             f"invalid UTF-8 byte 0x{raw[exc.start]:02x}; expected UTF-8 text")
    if text.startswith("\ufeff"):
        text = text[1:]
    tab = text.find("\t")
    if tab >= 0:
        line, col = _at(text, tab)
        return None, Finding(path, line, col, "tab-character",
                             "tab character; expected spaces (records are indented with spaces)")
    return text, None


def parse_text(path: str, text: str) -> Loaded:
    loader = _RecordLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return Loaded(path, findings=[Finding(path, 1, 1, "empty-file",
                                                  "file is empty; expected a record mapping")])
        if "&" in text and "*" in text:
            _check_alias_expansion(root)
        return Loaded(path, data=loader.construct_document(root))
    except yaml.MarkedYAMLError as exc:
        return Loaded(path, findings=[_yaml_finding(path, exc)])
    except RecursionError:
        return Loaded(path, findings=[Finding(path, 1, 1, "too-deep",
                                              "nesting is too deep; expected a flat record")])
    finally:
        loader.dispose()


def _yaml_finding(path: str, exc: yaml.MarkedYAMLError) -> Finding:
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    problem = (exc.problem or "invalid YAML").strip()
    if isinstance(exc, DuplicateKeyError):
        return Finding(path, line, col, "duplicate-key", problem)
    if isinstance(exc, AliasBombError):
        return Finding(path, line, col, "alias-bomb", problem)
    if isinstance(exc, yaml.constructor.ConstructorError) and "tag" in problem:
        quoted = re.search(r"'([^']*)'", problem)
        tag = (quoted.group(1) if quoted else "?").replace("tag:yaml.org,2002:", "!!")
        return Finding(path, line, col, "unsafe-tag",
                       f"tag '{tag}' is not allowed; expected plain YAML data "
                       "(mappings, lists, strings, numbers, booleans)")
    if exc.context and exc.context.startswith("expected") and problem.startswith("but "):
        return Finding(path, line, col, "yaml-syntax", f"{problem[4:]}; {exc.context.strip()}")
    context = f" ({exc.context.strip()})" if exc.context else ""
    return Finding(path, line, col, "yaml-syntax", f"{problem}{context}; expected valid YAML")


def load_file(path: str) -> Loaded:
    text, problem = read_text(path)
    if problem is not None:
        return Loaded(path, findings=[problem])
    assert text is not None
    return parse_text(path, text)


@lru_cache(maxsize=256)
def _compose(path: str, mtime_ns: int, size: int) -> Node | None:
    """Cached by absolute path and stat, so an edited or different file is never mixed up."""
    text, problem = read_text(path)
    if problem is not None or text is None:
        return None
    return yaml.compose(text, Loader=_RecordLoader)


def locate(path: str, keys: Sequence[str | int], *, at_key: bool = False) -> tuple[int, int]:
    """1-based line:col of the value at ``keys`` (or of its key), as deep as it exists."""
    try:
        stat = os.stat(path)
    except OSError:
        return 1, 1
    node = _compose(os.path.abspath(path), stat.st_mtime_ns, stat.st_size)
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


def _child(node: Node, key: str | int) -> tuple[Node | None, Node | None]:
    if isinstance(node, MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode) and key_node.value == str(key):
                return value_node, key_node
    if isinstance(node, SequenceNode) and isinstance(key, int) and key < len(node.value):
        return node.value[key], None
    return None, None


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
