"""Asking for missing options on a terminal, refusing clearly when there is none."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable

from tooling.errors import UsageError


@dataclass(frozen=True)
class Ask:
    name: str
    flag: str
    label: str
    choices: tuple[str, ...] = ()
    default: str | None = None

    def prompt(self) -> str:
        choices = f" [{'/'.join(self.choices)}]" if self.choices else ""
        default = f" (default: {self.default})" if self.default else ""
        return f"{self.label}{choices}{default}: "


def fill(asks: list[Ask], values: dict[str, Any], *, interactive: bool | None = None,
         read: Callable[[str], str] = input) -> dict[str, Any]:
    """``values`` with every missing entry asked for; defaults fill in when nobody can be asked."""
    missing = [a for a in asks if values.get(a.name) in (None, "")]
    if interactive is None:
        interactive = sys.stdin.isatty()
    if not interactive:
        required = [a.flag for a in missing if a.default is None]
        if required:
            raise UsageError(f"missing {', '.join(required)} (standard input is not a terminal, "
                             "so tooling cannot ask; pass them as options)")
        return {**values, **{a.name: a.default for a in missing}}
    filled = dict(values)
    for ask in missing:
        filled[ask.name] = _ask(ask, read)
    return filled


def _ask(ask: Ask, read: Callable[[str], str]) -> str:
    while True:
        try:
            answer = read(ask.prompt()).strip() or (ask.default or "")
        except EOFError:
            raise UsageError(f"no answer for {ask.flag}") from None
        if not answer:
            print(f"{ask.label} is required", file=sys.stderr)
        elif ask.choices and answer not in ask.choices:
            print(f"Expected one of: {list(ask.choices)} but received: {answer!r}", file=sys.stderr)
        else:
            return answer
