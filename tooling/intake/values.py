"""One cell as the value of one field: mapped, split, parsed, or reported as not mappable.

A cell holds text (CSV, markdown) or any JSON value (JSONL). Text is cleaned of characters no
record may hold; enum values go through the mapping's value map, then match the schema's values
without regard to case, spaces or dashes ('GPU hardware' is gpu-hardware); lists are split;
numbers may carry units ('6h', '45 min', '1.5 days', '1,200'). What cannot become a value of
the field comes back as ``unmapped`` with the reason, so the row can fall back and say so.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tooling.catalogue.hangul import nfc
from tooling.catalogue.modes import catalogue
from tooling.errors import UserError
from tooling.intake import fields
from tooling.intake.bounds import MAX_DIGITS, long_number
from tooling.intake.dates import DateRules, read_date
from tooling.records.characters import first_bad


@dataclass(frozen=True)
class Outcome:
    value: Any = None  # None: the cell gives no value (empty, or unmapped)
    guess: str | None = None  # the value was read loosely: why
    unmapped: str | None = None  # the cell could not be used: why


@dataclass(frozen=True)
class Context:
    """What a cell is read against: the mapping's value maps, separators and dates, and the runs."""

    values: dict[str, dict[str, str]]
    separators: dict[str, str]
    dates: DateRules
    runs: tuple[str, ...]


def key(text: str) -> str:
    """A value compared with the keys of a value map: case, spacing and the Unicode form do not
    matter (a Korean logbook's '심각' matches the mapping's whether typed composed or not)."""
    return " ".join(nfc(text).casefold().split())


def squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.casefold())


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")


def clean(value: Any) -> tuple[str, bool]:
    """Cell text without characters no record may hold (and without a wrapping code span);
    whether any had to go."""
    text = str(value).replace("\r\n", "\n").replace("\r", "\n")
    removed = first_bad(text) is not None
    if removed:  # each kind of character looked at once: not the whole text again per bad one
        text = text.translate({ord(c): None for c in set(text) if first_bad(c) is not None})
    text = text.strip()
    if len(text) > 2 and text[0] == text[-1] == "`" and "`" not in text[1:-1]:
        text = text[1:-1].strip()
    return text, removed


def empty(value: Any) -> bool:
    return value is None or value == [] or value == {} or (isinstance(value, str) and not value.strip())


def convert(name: str, cell: Any, column: str, ctx: Context) -> Outcome:
    if empty(cell):
        return Outcome()
    shape = fields.shape(name)
    if shape == "json" and not isinstance(cell, str):
        return Outcome(cell)  # JSONL: as the schema writes it; checked with the whole record
    if shape in ("list", "ints") or name == "links":
        if not isinstance(cell, (str, list)):
            return Outcome(unmapped=f"column {column!r}: expected a list or text "
                                    f"but received a JSON {type(cell).__name__}")
        return _items(name, cell, column, ctx)
    if isinstance(cell, (list, dict)):
        return Outcome(unmapped=f"column {column!r}: expected one value but received a JSON {type(cell).__name__}")
    text, removed = clean(cell)
    if not text:
        return Outcome()
    found = _scalar(name, shape, text, column, ctx)
    if removed and found.value is not None:
        return Outcome(found.value, _join(found.guess, "characters no record may hold were removed"))
    return found


def _scalar(name: str, shape: str, text: str, column: str, ctx: Context) -> Outcome:
    mapped = ctx.values.get(name, {}).get(key(text))
    if shape == "enum":
        return _enum(name, mapped or text, column)
    if shape == "date":
        read = read_date(text, ctx.dates)
        return Outcome(read.value, read.guess) if read.value else Outcome(unmapped=f"column {column!r}: {read.guess}")
    if shape in ("int", "number"):
        return _number(name, text, column)
    if shape == "json":
        return Outcome(unmapped=f"column {column!r}: expected {name} as JSON (a JSONL file) but received text")
    return _text(name, mapped or text, column, ctx)


def _enum(name: str, text: str, column: str) -> Outcome:
    allowed = fields.enum(name)
    for value in allowed:
        if squash(value) == squash(text):
            return Outcome(value)
    return Outcome(unmapped=f"column {column!r}: not a {name.replace('_', ' ')} of the schema and not in values.{name}")


def _text(name: str, text: str, column: str, ctx: Context) -> Outcome:
    if name == "run":
        for run in ctx.runs:
            if text == run or slug(text) == run:
                return Outcome(run)
        return Outcome(unmapped=f"column {column!r}: no run of that name in runbooks/runs/ "
                                f"({', '.join(ctx.runs) or 'none'}) and not in values.run")
    if name == "failure_mode":
        known = catalogue().get(text.strip().lower())
        return Outcome(known.id) if known else Outcome(
            unmapped=f"column {column!r}: not a failure mode of the catalogue and not in values.failure_mode")
    if name == "cluster":
        return Outcome(slug(text) or None)
    return Outcome(text)


_UNITS = {"": 1.0, "h": 1.0, "hr": 1.0, "hrs": 1.0, "hour": 1.0, "hours": 1.0, "gpuh": 1.0, "gpuhours": 1.0,
          "m": 1 / 60, "min": 1 / 60, "mins": 1 / 60, "minute": 1 / 60, "minutes": 1 / 60,
          "d": 24.0, "day": 24.0, "days": 24.0, "k": 1000.0, "x": 1.0, "times": 1.0}
_WORDS = {"once": 1, "twice": 2, "thrice": 3}
_QUANTITY = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]*)")
_NEGATIVE = re.compile(r"(?<![\w.])[-\u2212]\s*\d")


def _number(name: str, text: str, column: str) -> Outcome:
    """'6', '6h', '~3 hours', '45 min', '1.5 days', '1,200', '12k', '5x', 'happened 5 times'."""
    plain = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text.casefold()).replace("gpu-h", "gpuh").replace("gpu h", "gpuh")
    if plain in _WORDS:
        return Outcome(_WORDS[plain])
    found = _QUANTITY.findall(plain)
    if len(found) != 1 or found[0][1] not in _UNITS:
        return Outcome(unmapped=f"column {column!r}: expected one number (units h, min or days allowed)")
    if _NEGATIVE.search(plain):  # "-5" is not 5 hours lost
        return Outcome(unmapped=f"column {column!r}: expected a number of at least 0")
    written, unit = found[0]
    if len(written) - written.count(".") > MAX_DIGITS:  # before int(), which would take its time, then refuse
        raise UserError(long_number(f"column {column!r}", len(written) - written.count(".")))
    # a whole number stays exact (as a float, 10**23 would be shown as 99999999999999991611392)
    value: float = int(written) if written.isdigit() else float(written)
    number = value if _UNITS[unit] == 1 else value * _UNITS[unit]
    whole = float(number).is_integer() if isinstance(number, float) else True
    if fields.shape(name) == "int":
        if not whole or number < (1 if name == "occurrences" else 0):
            return Outcome(unmapped=f"column {column!r}: expected a whole number")
        return Outcome(int(number))
    return Outcome(int(number) if whole else round(number, 2))


def _items(name: str, cell: Any, column: str, ctx: Context) -> Outcome:
    parts = cell if isinstance(cell, list) else str(cell).split(fields.separator(name, ctx.separators))
    items, removed = [], False
    for part in parts:
        text, lost = clean(part) if not isinstance(part, int) else (part, False)
        removed |= lost
        if text == "" or (item := _item(name, text, column, ctx)) in items:
            continue
        if item is None:
            return Outcome(unmapped=f"column {column!r}: {excerpt_item(text)} is not a {_what(name)}")
        items.append(item)
    guess = "characters no record may hold were removed" if removed else None
    return Outcome(items or None, guess if items else None)


def _item(name: str, text: Any, column: str, ctx: Context) -> Any:
    if name == "ranks":
        return text if isinstance(text, int) else _whole(str(text), column)
    if name == "tags":
        return slug(ctx.values.get("tags", {}).get(key(str(text)), str(text))) or None
    if name == "links":
        return {"title": column, "url": text} if re.match(r"^(https?://|\.{0,2}/)", str(text)) else None
    return str(text)


def _whole(text: str, column: str) -> int | None:
    """``text`` as a whole number >= 0 if it is written as one (ASCII digits: '²' is a digit to
    str.isdigit, not to int); too many digits are refused before int() takes its time over them."""
    if not (text.isascii() and text.isdigit()):
        return None
    if len(text) > MAX_DIGITS:
        raise UserError(long_number(f"column {column!r}", len(text)))
    return int(text)


def _what(name: str) -> str:
    return {"ranks": "whole number >= 0", "links": "URL (http(s):// or a ./relative path)",
            "tags": "tag (letters, digits, dots and dashes)"}.get(name, "value")


def excerpt_item(text: Any) -> str:
    return repr(str(text)[:60])


def _join(first: str | None, second: str | None) -> str | None:
    return "; ".join(p for p in (first, second) if p) or None
