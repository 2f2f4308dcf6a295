"""Reading record files safely: the only module that parses YAML into records.

The fast path is libyaml (tooling.records.yaml_loader) with guards that cost almost nothing on a
valid file; positions (line:col of any value) are recovered by tooling.records.locate, which
re-composes the file only when a finding has to point into it.
"""
from __future__ import annotations

import gc
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

import yaml
from yaml.nodes import Node

from tooling.records.characters import ESCAPES
from tooling.records.findings import Finding
from tooling.records.locate import remember_loaded, stat_key
from tooling.records.reading import character_finding, read_text
from tooling.records.yaml_loader import (AliasBombError, DuplicateKeyError, InvalidCharacterError,
                                         InvalidKeyError, InvalidNumberError, RecordLoader, check_alias_expansion,
                                         check_escaped)


@dataclass
class Loaded:
    """The result of reading one file: plain data, or the findings that stopped it."""

    path: str
    data: Any = None
    findings: list[Finding] = field(default_factory=list)
    node: Node | None = field(default=None, repr=False, compare=False)  # for locating findings


def parse_text(path: str, text: str) -> Loaded:
    """The record in ``text`` (read from ``path``), or the findings that stop it."""
    bad = character_finding(path, text)
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
    loader = RecordLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return Loaded(path, findings=[Finding(path, 1, 1, "empty-file",
                                                  "file is empty; expected a record mapping")])
        if "&" in text and "*" in text:
            check_alias_expansion(root)
        data = loader.construct_document(root)
        if "\\" in text and ESCAPES.search(text):  # a double-quoted "\e" or "\x85" spells a bad character
            check_escaped(data, root)
        return Loaded(path, data=data, node=root)
    except yaml.MarkedYAMLError as exc:
        return Loaded(path, findings=[yaml_finding(path, exc)])
    except RecursionError:
        return Loaded(path, findings=[Finding(path, 1, 1, "too-deep",
                                              "nesting is too deep; expected a flat record")])
    finally:
        loader.dispose()


_GUARD_RULES: dict[type[yaml.MarkedYAMLError], str] = {
    DuplicateKeyError: "duplicate-key", AliasBombError: "alias-bomb", InvalidNumberError: "invalid-number",
    InvalidCharacterError: "invalid-character", InvalidKeyError: "invalid-key",
}


def yaml_finding(path: str, exc: yaml.MarkedYAMLError) -> Finding:
    """A YAML error of the file at ``path`` as a located finding (records, and mkdocs.yml for the site)."""
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    problem = (exc.problem or "invalid YAML").strip()
    rule = _GUARD_RULES.get(type(exc))
    if rule is not None:
        return Finding(path, line, col, rule, problem)
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
    key = stat_key(path)
    text, problem = read_text(path)
    if problem is not None:
        return Loaded(path, findings=[problem])
    assert text is not None
    loaded = _parse(path, text)  # read_text has checked the characters
    remember_loaded(key, loaded.node)
    return loaded


def outside(path: str, root: str | None) -> bool:
    """A symbolic link that leads out of the repository (``root``, real): never read, never echoed.
    (A link to nothing leads nowhere: reading says so.)"""
    if root is None or not os.path.islink(path) or not os.path.exists(path):
        return False
    real = os.path.realpath(path)
    return os.path.commonpath([real, root]) != root


def load_within(path: str, root: str | None) -> Loaded:
    """The file at ``path`` as validate reads it: refused when it is a link out of ``root`` (the
    repository's real path; None: anywhere)."""
    if outside(path, root):
        return Loaded(path, findings=[Finding(path, 1, 1, "outside-repository", "symbolic link to a file outside "
                                              "the repository; expected the record itself")])
    return load_file(path)
