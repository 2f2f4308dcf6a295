"""A JSONL logbook: one JSON object per line, each line a row and each key a column.

A line that is not an object stops the whole import (every bad line is listed) rather than
being skipped, because a history with silent holes is worse than an error fixed in a minute.
A line past a bound (bounds.py: its bytes, its nesting, a number's digits) is refused at once,
before json.loads takes its time over it or int() over the digits.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tooling.errors import UserError
from tooling.intake.bounds import MAX_DEPTH, MAX_DIGITS, long_number, size, wide, within
from tooling.intake.table import Row, Table

MAX_ERRORS = 20


def read_jsonl(path: Path, text: str) -> Table:
    table, errors = Table([], {}), []
    for number, line in enumerate(text.split("\n"), 1):  # not splitlines: U+2028 is text inside JSON
        within(path, number, size(line))
        if not line.strip():
            continue
        data = _object(path, number, line)
        if isinstance(data, str):
            errors.append(data)
            continue
        for key in data:
            if key not in table.header_lines:
                table.columns.append(key)
                table.header_lines[key] = number
        wide(path, number, len(table.columns))
        table.rows.append(Row(number, data))
    if errors:
        more = f"\n... and {len(errors) - MAX_ERRORS} more" if len(errors) > MAX_ERRORS else ""
        raise UserError("\n".join(errors[:MAX_ERRORS]) + more + "\n(nothing was imported)")
    return table


def _object(path: Path, number: int, line: str) -> dict[str, Any] | str:
    """The line's object, or why it is none (listed with the other bad lines); past a bound, refused."""
    longs: list[_Long] = []
    try:
        data = json.loads(line, parse_constant=_no_constant, parse_int=lambda text: _whole(text, longs))
    except RecursionError:  # json's own limit, about a thousand levels: past ours too
        raise _deep(path, number, "") from None
    except (json.JSONDecodeError, ValueError) as exc:
        col = getattr(exc, "colno", 1)
        return f"{path}:{number}:{col}: {getattr(exc, 'msg', exc)}; expected one JSON object per line"
    if not isinstance(data, dict):
        return f"{path}:{number}:1: a JSON {type(data).__name__}; expected one JSON object per line"
    if longs or line.count("{") + line.count("[") > MAX_DEPTH:  # else nothing to look for: no walk
        _bounded(path, number, data)
    return data


class _Long:
    """A JSON integer of more than MAX_DIGITS digits, never converted: found by :func:`_bounded`."""

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _whole(text: str, longs: list[_Long]) -> int | _Long:
    digits = len(text.lstrip("-"))
    if digits <= MAX_DIGITS:
        return int(text)
    longs.append(_Long(digits))
    return longs[-1]


def _bounded(path: Path, number: int, data: dict[str, Any]) -> None:
    """Refuse nesting deeper than MAX_DEPTH and numbers longer than MAX_DIGITS, the first in the
    line's order, named by its dotted key (a walk without recursion: the depth is what is checked)."""
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _deep(path, number, where)
        if isinstance(value, _Long):
            raise UserError(f"{path}:{number}:1: {long_number(where, value.digits)}")
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        stack.extend(reversed([(v, f"{where}.{_key(k)}" if where else _key(k), depth + 1) for k, v in items]))


def _key(key: object) -> str:
    """A key of the path as the one line of the error can show it: quoted (ASCII) unless plain."""
    text = str(key)
    return text if re.fullmatch(r"[A-Za-z0-9_-]+", text) else json.dumps(text)


def _deep(path: Path, number: int, where: str) -> UserError:
    return UserError(f"{path}:{number}:1: [too-deep] {where + ': ' if where else ''}JSON nested more than "
                     f"{MAX_DEPTH} levels deep; expected an incident's fields (a record nests three deep)")


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")
