"""Allocating the next free record id without ever overwriting a file."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from tooling.errors import UserError
from tooling.fs.atomic import create_file

MAX_ATTEMPTS = 10_000


def highest_number(directory: Path, prefix: str) -> int:
    pattern = re.compile(rf"^{re.escape(prefix)}(\d+)\.ya?ml$")
    numbers = [int(m.group(1)) for p in directory.iterdir() if (m := pattern.match(p.name))]
    return max(numbers, default=0)


def format_id(prefix: str, number: int) -> str:
    return f"{prefix}{number:04d}"


def create_next(directory: Path, prefix: str, render: Callable[[str], str]) -> tuple[str, Path]:
    """Write ``render(id)`` under the next free ``<prefix>NNNN.yaml``; return the id and path.

    Concurrent callers each compute the next number; link(2) lets exactly one of them take a
    name, and the losers move on to a higher number instead of overwriting.
    """
    directory.mkdir(parents=True, exist_ok=True)
    tried = 0
    for _ in range(MAX_ATTEMPTS):
        number = max(highest_number(directory, prefix) + 1, tried + 1)
        record_id = format_id(prefix, number)
        path = directory / f"{record_id}.yaml"
        try:
            create_file(path, render(record_id))
            return record_id, path
        except FileExistsError:
            tried = number
    raise UserError(f"{directory}: could not allocate a new {prefix} id after {MAX_ATTEMPTS} attempts")
