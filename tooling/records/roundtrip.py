"""Round-trip editing with ruamel.yaml: comments, key order and quoting survive, and plain
scalars are typed as the records' loader types them (tooling.records.scalars)."""
from __future__ import annotations

import io
import sys
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import ConstructorError, RoundTripConstructor
from ruamel.yaml.error import YAMLError
from ruamel.yaml.resolver import VersionedResolver

from tooling.records.scalars import Emitter, RecordsResolver, Representer, TypedResolver
from tooling.records.yaml_loader import integer_too_large, too_many_digits

class _Constructor(RoundTripConstructor):
    """ruamel's, with the records' bound on a whole number's digits, checked before converting
    them (a value typed for ``tooling set`` is read here, not by the records' loader)."""

    def construct_yaml_int(self, node: Any) -> Any:
        if too_many_digits(str(node.value)):
            raise ConstructorError(problem=integer_too_large(str(node.value)), problem_mark=node.start_mark)
        return super().construct_yaml_int(node)


_Constructor.add_constructor("tag:yaml.org,2002:int", _Constructor.construct_yaml_int)


def _reader(resolver: type[VersionedResolver] = RecordsResolver) -> YAML:
    yaml = YAML(typ="rt")
    yaml.Constructor = _Constructor
    yaml.Resolver = resolver
    yaml.Representer = Representer
    yaml.Emitter = Emitter
    return yaml


def _yaml(mapping: int, sequence: int, offset: int) -> YAML:
    yaml = _reader()
    yaml.preserve_quotes = True
    # Never fold a line: besides re-wrapping the user's long lines, ruamel puts a word longer
    # than the width on a line of its own after the spaces before it, and a fold keeps one
    # space of a run ('0    [x](y)…' read back as '0 [x](y)…').
    yaml.width = sys.maxsize
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


def replace(parent: Any, slot: Any, value: Any) -> None:
    """``parent[slot] = value``, keeping the comment lines that follow the old value: ruamel
    holds them in a collection's last item, which would take them away with it."""
    held = slot in parent if isinstance(parent, dict) else 0 <= slot < len(parent)
    comment = _take_trailing(parent[slot]) if held else None
    parent[slot] = value
    if comment is not None:
        _put_trailing(parent, slot, comment)


def _last(collection: Any) -> tuple[Any, int]:
    """The key of a collection's last item, and where ruamel keeps the comment after it."""
    return (next(reversed(collection)), 2) if isinstance(collection, dict) else (len(collection) - 1, 0)


def _take_trailing(value: Any) -> Any:
    while isinstance(value, (CommentedMap, CommentedSeq)) and len(value):
        key, place = _last(value)
        entry = value.ca.items.get(key)
        if entry and entry[place] is not None:
            token, entry[place] = entry[place], None
            return token
        value = value[key]
    return None


def _put_trailing(parent: Any, slot: Any, token: Any) -> None:
    holder, key = parent, slot
    while isinstance(holder[key], (dict, list)) and len(holder[key]) and not _flow(holder[key]):
        if not isinstance(holder[key], (CommentedMap, CommentedSeq)):  # a plain one is written block too
            holder[key] = CommentedMap(holder[key]) if isinstance(holder[key], dict) else CommentedSeq(holder[key])
        holder, key = holder[key], _last(holder[key])[0]  # a block collection: after its last item
    place = 2 if isinstance(holder, dict) else 0
    entry = holder.ca.items.setdefault(key, [None] * 4)
    if entry[place] is None:
        entry[place] = token
    else:  # the new value's own comment first, then the lines that followed the old one
        entry[place].value += token.value


def _flow(collection: Any) -> bool:
    return isinstance(collection, (CommentedMap, CommentedSeq)) and bool(collection.fa.flow_style())


def load_value(text: str) -> Any:
    """A value typed on the command line, read as YAML 1.2 (tooling.records.scalars)."""
    try:
        return _reader(TypedResolver).load(text)
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
    return _with_tabs(_reader(TypedResolver).load(text.strip(" \t").replace("\t", stand_in)), stand_in)


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


def dump_field(key: str, value: Any) -> str:
    """``key: value`` as block YAML in the house style, for scaffolding new files (a time is
    written plain: to the records' loader it is text)."""
    return dump({key: value}, _yaml(2, 4, 2))
