"""Sentences the analyses say, kept as a message and its values until someone reads them.

An analysis that explains itself ("checkpoint storage is 12% of the GPU cost, ...", "failure mode
gpu.hbm-ecc (Xid 79)") writes the sentence once, as a gettext message marked with ``N_`` so that
``pybabel extract`` finds it (tooling/locale/README.md), and hands on a :class:`Message`: that
message with the values it carries. The CLI prints it in English (``str``); the site's render
step puts it in an edition's language with that edition's catalogue (``render(m, t.gettext)``),
from the same values. No one rebuilds a sentence by matching its English wording.

Pure: no catalogue is read here, so analyses stay free of I/O and of the site.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Union

Gettext = Callable[[str], str]
Value = Union[str, int, float]


def N_(message: str) -> str:
    """Marks a message for extraction where it is defined; it is translated where it is shown."""
    return message


def _english(message: str) -> str:
    return message  # English is the source language: the message is its own translation


@dataclass(frozen=True)
class Message:
    """A gettext message (``%(name)s`` placeholders, ``%%`` for a percent sign) and its values.

    The values are kept as sorted pairs so that a message is hashable: groups dedupe their
    reasons and identities are compared by them."""

    msgid: str
    values: tuple[tuple[str, Value], ...] = ()

    def with_values(self, **values: Value) -> Message:
        """The same message with ``values`` added or replaced."""
        return Message(self.msgid, tuple(sorted({**dict(self.values), **values}.items())))

    def render(self, gettext: Gettext = _english) -> str:
        return gettext(self.msgid) % dict(self.values)

    def __str__(self) -> str:
        return self.render()


def message(msgid: str, **values: Value) -> Message:
    return Message(msgid).with_values(**values)


def render(said: Message | Iterable[Message], gettext: Gettext = _english) -> str:
    """One message, or several as one line ("failure mode x; marked repeat_of"), in the
    language of ``gettext`` (English by default)."""
    if isinstance(said, Message):
        return said.render(gettext)
    return "; ".join(m.render(gettext) for m in said)


def counted(count: int, word: str, plural: str | None = None) -> str:
    """A count with its noun in English, for the command line: "1 row", "3 rows", "2 guesses"."""
    return f"{count} {word if count == 1 else plural or word + 's'}"
