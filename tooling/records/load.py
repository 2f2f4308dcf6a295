"""Reading record files safely: the only module that touches YAML syntax.

The fast path is libyaml (``CSafeLoader``) with guards that cost almost nothing on a valid
file; positions (line:col of any value) are recovered by :func:`locate`, which re-composes
the file only when a finding has to point into it.
"""
from __future__ import annotations

import errno
import gc
import math
import os
import re
import stat
from dataclasses import dataclass, field
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from tooling.records.characters import ESCAPES, first_bad
from tooling.records.findings import Finding, excerpt

MAX_FILE_BYTES = 1 << 20  # a record is a page of text; anything larger is a mistake or an attack
MAX_EXPANDED_NODES = 100_000  # alias expansion bound ("billion laughs")
MAX_INTEGER = 2**63 - 1  # what any consumer (JSON, numpy, a database) holds; more is a typo or an attack

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


_RecordLoader.add_constructor("tag:yaml.org,2002:int", _RecordLoader.construct_yaml_int)
_RecordLoader.add_constructor("tag:yaml.org,2002:float", _RecordLoader.construct_yaml_float)


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
    node: Node | None = field(default=None, repr=False, compare=False)  # for locating findings


def _at(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    col = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, col


def _read_regular(path: str) -> bytes | Finding:
    """The first bytes of a regular file; a FIFO or device is refused, never waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENOENT and os.path.islink(path):  # its target is not named: it may be outside
            return Finding(path, 1, 1, "unreadable", "cannot read file: a symbolic link to nothing (its target "
                           "does not exist); expected the record itself or a link to it")
        return Finding(path, 1, 1, "unreadable", f"cannot read file: {exc.strerror}")
    wrong = _not_a_file(path, os.fstat(fd).st_mode)
    if wrong is not None:
        os.close(fd)  # before fdopen, which refuses a folder
        return wrong
    with os.fdopen(fd, "rb") as handle:
        try:
            return handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            return Finding(path, 1, 1, "unreadable", f"cannot read file: {exc.strerror}")


def _not_a_file(path: str, mode: int) -> Finding | None:
    if stat.S_ISDIR(mode):
        return Finding(path, 1, 1, "not-a-file", "a folder, not a file; expected a record file (only a record "
                       "file's name ends in .yaml or .yml)")
    if not stat.S_ISREG(mode):
        return Finding(path, 1, 1, "not-a-file", "not a regular file (a FIFO, device or socket); "
                       "expected a record file")
    return None


def _character_finding(path: str, text: str) -> Finding | None:
    bad = first_bad(text)
    return Finding(path, *_at(text, bad[0]), "invalid-character", bad[1]) if bad else None


def read_text(path: str) -> tuple[str | None, Finding | None]:
    """File text, or the finding that explains why it cannot be read as a record."""
    raw = _read_regular(path)
    if isinstance(raw, Finding):
        return None, raw
    return decode_text(path, raw)


def decode_text(path: str, raw: bytes) -> tuple[str | None, Finding | None]:
    """The text of a record file's bytes, or the finding that refuses them (also for bytes
    about to be written: a writer refuses what reading would refuse)."""
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
    bad = _character_finding(path, text)
    return (None, bad) if bad else (text, None)


def parse_text(path: str, text: str) -> Loaded:
    """The record in ``text`` (read from ``path``), or the findings that stop it."""
    bad = _character_finding(path, text)
    return Loaded(path, findings=[bad]) if bad is not None else _parse(path, text)


def _parse(path: str, text: str) -> Loaded:
    with no_collection():
        return _compose_and_construct(path, text)


@contextmanager
def no_collection() -> Iterator[None]:
    """Checking a record makes tens of thousands of objects (nodes, data, indexes) without a
    cycle among them; the collector would walk every live object of the process again and again
    while they are made. Whatever cycles there are, it finds once it runs again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _compose_and_construct(path: str, text: str) -> Loaded:
    loader = _RecordLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return Loaded(path, findings=[Finding(path, 1, 1, "empty-file",
                                                  "file is empty; expected a record mapping")])
        if "&" in text and "*" in text:
            _check_alias_expansion(root)
        data = loader.construct_document(root)
        if "\\" in text and ESCAPES.search(text):  # a double-quoted "\e" or "\x85" spells a bad character
            _check_escaped(data, root)
        return Loaded(path, data=data, node=root)
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
    if isinstance(exc, InvalidNumberError):
        return Finding(path, line, col, "invalid-number", problem)
    if isinstance(exc, InvalidCharacterError):
        return Finding(path, line, col, "invalid-character", problem)
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


def _check_escaped(data: Any, node: Node) -> None:
    """Strings built from escapes are held to the same characters as the file's own text."""
    if isinstance(node, ScalarNode) and isinstance(data, str):
        bad = first_bad(data)
        if bad is not None:
            raise InvalidCharacterError(problem=f"escaped {bad[1]}", problem_mark=node.start_mark)
    elif isinstance(node, SequenceNode) and isinstance(data, list):
        for child, value in zip(node.value, data):
            _check_escaped(value, child)
    elif isinstance(node, MappingNode) and isinstance(data, dict):
        for key_node, value_node in node.value:
            key = data.get(key_node.value) if isinstance(key_node, ScalarNode) else None
            _check_escaped(key_node.value, key_node)
            _check_escaped(key, value_node)


def load_file(path: str) -> Loaded:
    key = _stat_key(path)
    text, problem = read_text(path)
    if problem is not None:
        return Loaded(path, findings=[problem])
    assert text is not None
    loaded = _parse(path, text)  # read_text has checked the characters
    global _LAST
    if key is not None and loaded.node is not None:
        _LAST = (key, loaded.node)  # findings about this file are located without parsing it again
    return loaded


# The file loaded last (findings about it follow at once), and a few composed on demand. Only
# one tree is kept from loading: keeping more makes every garbage collection slower.
_LAST: tuple[tuple[str, int, int], Node] | None = None
_NODES: OrderedDict[tuple[str, int, int], Node | None] = OrderedDict()
_NODES_KEPT = 64


def _stat_key(path: str) -> tuple[str, int, int] | None:
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
        _remember(key, None if problem is not None or text is None else yaml.compose(text, Loader=_RecordLoader))
    return _NODES[key]


def locate(path: str, keys: Sequence[str | int], *, at_key: bool = False) -> tuple[int, int]:
    """1-based line:col of the value at ``keys`` (or of its key), as deep as it exists."""
    key = _stat_key(path)
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
