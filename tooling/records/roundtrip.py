"""Round-trip editing with ruamel.yaml: comments, key order and quoting survive."""
from __future__ import annotations

import io
import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import ConstructorError, RoundTripConstructor
from ruamel.yaml.error import YAMLError

from tooling.records.yaml_loader import integer_too_large, too_many_digits


class _Constructor(RoundTripConstructor):
    """ruamel's, with the records' bound on a whole number's digits, checked before converting
    them (a value typed for ``tooling set`` is read here, not by the records' loader)."""

    def construct_yaml_int(self, node: Any) -> Any:
        if too_many_digits(str(node.value)):
            raise ConstructorError(problem=integer_too_large(str(node.value)), problem_mark=node.start_mark)
        return super().construct_yaml_int(node)


_Constructor.add_constructor("tag:yaml.org,2002:int", _Constructor.construct_yaml_int)


def _reader() -> YAML:
    yaml = YAML(typ="rt")
    yaml.Constructor = _Constructor
    return yaml


def _yaml(mapping: int, sequence: int, offset: int) -> YAML:
    yaml = _reader()
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap the user's long lines
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    return yaml


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def guess_indent(text: str) -> tuple[int, int, int]:
    """(mapping indent, sequence content indent, dash offset) as the file already uses them."""
    mapping = sequence = offset = None
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    for parent, child in zip(lines, lines[1:]):
        step = _indent(child) - _indent(parent)
        if not parent.rstrip().endswith(":") or step < 0:
            continue
        body = child.lstrip(" ")
        if body.startswith("- ") and offset is None:
            offset = step
            sequence = step + 1 + _indent(body[1:])
        elif not body.startswith("- ") and step > 0 and mapping is None:
            mapping = step
    if offset is None:
        offset, sequence = 2, 4
    return mapping or 2, sequence or offset + 2, offset


def load(text: str) -> tuple[Any, YAML]:
    """The document as ruamel's commented structures, and a dumper matching its indentation."""
    yaml = _yaml(*guess_indent(text))
    return yaml.load(text), yaml


def dump(document: Any, yaml: YAML) -> str:
    out = io.StringIO()
    yaml.dump(document, out)
    return out.getvalue()


def load_value(text: str) -> Any:
    """A value typed on the command line, as ruamel would read it in a file (times keep their form)."""
    try:
        return _reader().load(text)
    except YAMLError as exc:
        if "\t" in text:
            try:
                return _load_with_tabs(text)
            except YAMLError:
                pass
        raise ValueError(_gist(exc)) from None


# Noncharacters: no record may hold one (records.characters), so one not in the text can stand in.
_STAND_INS = [chr(code) for code in range(0xFDD0, 0xFDF0)]


def _load_with_tabs(text: str) -> Any:
    """YAML 1.2 allows a tab inside a plain scalar (a pasted log line has them) but ruamel's
    scanner refuses it: read the text with a stand-in for each tab, then put the tabs back.
    Writing such a string double-quotes it with a ``\\t`` escape, so the file holds no tab."""
    stand_in = next((c for c in _STAND_INS if c not in text), None)
    if stand_in is None:
        raise YAMLError("no stand-in for a tab")
    # around the value a tab is space, as YAML reads it; inside, it is part of the text
    return _with_tabs(_reader().load(text.strip(" \t").replace("\t", stand_in)), stand_in)


def _with_tabs(value: Any, stand_in: str) -> Any:
    if isinstance(value, str):
        return value.replace(stand_in, "\t")
    if isinstance(value, dict):
        return {_with_tabs(k, stand_in): _with_tabs(v, stand_in) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_tabs(v, stand_in) for v in value]
    return value


def _gist(exc: YAMLError) -> str:
    """ruamel's first line is often only the context ('while scanning ...'): the problem and
    where it is say more."""
    problem, mark = getattr(exc, "problem", None), getattr(exc, "problem_mark", None)
    if not problem:
        return str(exc).splitlines()[0]
    where = "" if mark is None else f" at character {mark.column + 1}" + (
        f" of line {mark.line + 1}" if mark.line else "")
    head, sep, expected = problem.strip().partition("; ")  # a problem that says what was expected: where before it
    return f"{head}{where}{sep}{expected}"


_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?)?\Z")


def _unquoted_times(value: Any) -> Any:
    """Timestamps as ruamel objects, so they are written plain like a person would write them."""
    if isinstance(value, str) and _TIMESTAMP.match(value):
        return load_value(value)
    if isinstance(value, dict):
        return {k: _unquoted_times(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unquoted_times(v) for v in value]
    return value


def dump_field(key: str, value: Any) -> str:
    """``key: value`` as block YAML in the house style, for scaffolding new files."""
    return dump({key: _unquoted_times(value)}, _yaml(2, 4, 2))
