"""Round-trip editing with ruamel.yaml: comments, key order and quoting survive."""
from __future__ import annotations

import io
import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError


def _yaml(mapping: int, sequence: int, offset: int) -> YAML:
    yaml = YAML(typ="rt")
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
        return YAML(typ="rt").load(text)
    except YAMLError as exc:
        raise ValueError(str(exc).splitlines()[0]) from None


_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?)?$")


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
