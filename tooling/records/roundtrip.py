"""Round-trip editing with ruamel.yaml: comments, key order and quoting survive."""
from __future__ import annotations

import io
from typing import Any

from ruamel.yaml import YAML


def _yaml(mapping: int, offset: int) -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap the user's long lines
    yaml.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    return yaml


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def guess_indent(text: str) -> tuple[int, int]:
    """(mapping indent, dash offset of block sequences) as the file already uses them."""
    mapping = offset = None
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    for parent, child in zip(lines, lines[1:]):
        step = _indent(child) - _indent(parent)
        if not parent.rstrip().endswith(":") or step < 0:
            continue
        if child.lstrip().startswith("- "):
            offset = step if offset is None else offset
        elif step > 0:
            mapping = step if mapping is None else mapping
    return mapping or 2, offset if offset is not None else 2


def load(text: str) -> tuple[Any, YAML]:
    """The document as ruamel's commented structures, and a dumper matching its indentation."""
    yaml = _yaml(*guess_indent(text))
    return yaml.load(text), yaml


def dump(document: Any, yaml: YAML) -> str:
    out = io.StringIO()
    yaml.dump(document, out)
    return out.getvalue()


def dump_field(key: str, value: Any) -> str:
    """``key: value`` as block YAML in the house style, for scaffolding new files."""
    return dump({key: value}, _yaml(2, 2))
