"""Argument types of the `tooling` command line: each converts one argument or refuses it with
the mkdocs-style wording "expected ... but received: 'x'" (argparse prints it, located at the
option, and exits 2)."""
from __future__ import annotations

import argparse
import math
import re
from datetime import datetime

from tooling.rules.time_rules import EARLIEST, LATEST


def timestamp(text: str) -> datetime:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a timestamp such as 2026-11-29T12:00:00+00:00 "
                                         f"but received: {text!r}") from None
    if when.tzinfo is None:
        raise argparse.ArgumentTypeError(f"expected a timestamp with a timezone offset but received: {text!r}")
    if not EARLIEST <= when.date() <= LATEST:  # the records' own range: the analyses walk the calendar
        raise argparse.ArgumentTypeError(f"expected a time in the years {EARLIEST.year}-{LATEST.year} "
                                         f"but received: {text!r}")
    return when


def address(text: str) -> str:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected host:port such as 127.0.0.1:8000 but received: {text!r}")
    return text


def version(text: str) -> str:
    # mike makes it a folder of the gh-pages branch: a plain name, never a path
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}", text):
        raise argparse.ArgumentTypeError("expected a version name of letters, digits, dots and dashes "
                                         f"such as 0.3 or 2026-11-29 but received: {text!r}")
    return text


def natural(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0 but received: {text!r}")
    return int(text)


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1 but received: {text!r}")
    return int(text)


def pid_list(text: str) -> list[int]:
    return [positive(p.strip()) for p in text.split(",")]


def _number(text: str) -> float:
    """The number ``text`` says, or nan when it says none (nan fails every range check below)."""
    try:
        return float(text)
    except ValueError:
        return math.nan


def finite(text: str) -> float:
    value = _number(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number but received: {text!r}")
    return value


def non_negative(text: str) -> float:
    value = finite(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0 but received: {text!r}")
    return value


def seconds(text: str) -> float:
    if not 0 < _number(text) <= 3600:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"expected seconds between 0 and 3600 but received: {text!r}")
    return float(text)


def minutes(text: str) -> float:
    if not 0 < _number(text) <= 10080:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"expected minutes above 0 and at most 10080 (a week), such as 30 or 0.5, "
                                         f"but received: {text!r}")
    return float(text)


def percent(text: str) -> float:
    if not 0 <= _number(text) <= 100:  # also refuses nan
        raise argparse.ArgumentTypeError(f"expected a percentage between 0 and 100 but received: {text!r}")
    return float(text)
