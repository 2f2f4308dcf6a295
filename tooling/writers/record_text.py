"""New record files as commented YAML: each field explained from its schema description."""
from __future__ import annotations

import os
import textwrap
from importlib import resources
from pathlib import Path
from typing import Any

from tooling.records.kinds import KINDS
from tooling.records.roundtrip import dump_field
from tooling.records.schema import schema_for


def schema_path(kind: str) -> Path:
    return Path(str(resources.files("tooling.schemas").joinpath(KINDS[kind].schema_file)))


def modeline(kind: str, directory: Path) -> str:
    """The yaml-language-server hint, relative so the repository can move."""
    target = schema_path(kind).resolve()
    try:
        ref = os.path.relpath(target, directory.resolve())
    except ValueError:  # another drive: fall back to the absolute path
        ref = str(target)
    return f"# yaml-language-server: $schema={Path(ref).as_posix()}"


def _comment(text: str) -> list[str]:
    return [f"# {line}" for line in textwrap.wrap(text, width=92)]


def render(kind: str, values: dict[str, Any], *, directory: Path, header: str) -> str:
    """The file text: modeline, header, then every schema field in order.

    Fields in ``values`` are written; the others appear commented out, so the person filling
    the file in sees everything the schema offers without any of it failing validation.
    """
    lines = [modeline(kind, directory), *_comment(header), ""]
    for key, spec in schema_for(kind)["properties"].items():
        lines += _comment(spec.get("description", ""))
        if key in values:
            lines += dump_field(key, values[key]).rstrip("\n").split("\n")
        else:
            lines.append(f"# {key}:")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
