"""Typed fields of a JSON document read by a program (the offset file of tooling watch): each
refusal a ValueError naming the field by its dotted place in the document."""
from __future__ import annotations

from typing import Any


def field(data: Any, where: str, key: str, kind: type | tuple[type, ...]) -> Any:
    """``data[key]`` when ``data`` is a mapping holding one of ``kind`` there (``where``: the
    mapping's dotted place in the file, for the message)."""
    if not isinstance(data, dict):
        raise ValueError(f"{where or 'the file'} is {_name(type(data))}, expected an object")
    if key not in data:
        raise ValueError(f"{where + '.' if where else ''}{key} is missing")
    value, kinds = data[key], kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise ValueError(f"{where + '.' if where else ''}{key} is {_name(type(value))}, expected "
                         f"{' or '.join(_name(k) for k in kinds)}")
    return value


def _name(kind: type) -> str:
    """A JSON type's name."""
    return {dict: "an object", list: "a list", str: "a string", int: "a whole number", bool: "true or false",
            float: "a fraction", type(None): "null"}.get(kind, kind.__name__)


def count(data: Any, where: str, key: str) -> int:
    value = field(data, where, key, int)
    if value < 0:
        raise ValueError(f"{where + '.' if where else ''}{key} is {value}, expected a number >= 0")
    return value


def strings(data: dict[str, Any], where: str, key: str) -> list[str]:
    values = field(data, where, key, list)
    if not all(isinstance(value, str) for value in values):
        raise ValueError(f"{where}.{key} holds other than strings, expected a list of strings")
    return values
