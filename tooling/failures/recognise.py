"""Which failure mode a log line, a signature or a description is.

A line is *recognised* when a recogniser of a mode matches it or it carries a code the mode owns
(an Xid, an errno, an exit status): that decides. A description (a title, a note, a paraphrase)
only *suggests* modes through their keywords. When several modes fit, the first specific one in
catalogue order wins; the generic catch-alls only when nothing else fits.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from tooling.failures.catalogue import Catalogue, FailureMode, catalogue
from tooling.failures.codes import Codes, codes
from tooling.failures.engine import Matcher


@dataclass(frozen=True)
class Recognition:
    mode: FailureMode | None
    codes: Codes
    via: str = ""  # what decided: "Xid 79", "errno 28", "'fallen off the bus'"

    @property
    def distinguishing(self) -> tuple[str, ...]:
        """The codes that tell this failure apart from others of its mode (see ``distinguish``)."""
        if self.mode is None:
            return ()
        return tuple(value for kind in self.mode.distinguish for value in self.codes.of(kind)[:1])


class Recogniser:
    """The catalogue compiled for fast matching: one automaton over every recogniser."""

    def __init__(self, modes: Catalogue) -> None:
        self.catalogue = modes
        self.owner = [(mode, pattern) for mode in modes.modes for pattern in mode.recognisers]
        self.lines = Matcher([p for _, p in self.owner], first_only=True)
        self.words = [(mode, pattern) for mode in modes.modes for pattern in mode.keywords]
        self.keywords = Matcher([p for _, p in self.words], first_only=True)
        self.by_code = {(kind, code): mode for mode in modes.modes
                        for kind, values in (("xid", mode.xid), ("errno", mode.errno), ("exit", mode.exit_codes))
                        for code in values}

    def line(self, text: str) -> Recognition:
        found = codes(text)
        fits: dict[str, tuple[FailureMode, str]] = {}
        for kind, label in (("xid", "Xid"), ("errno", "errno"), ("exit", "exit")):
            for code in getattr(found, kind):
                mode = self.by_code.get((kind, code))
                if mode is not None:
                    fits.setdefault(mode.id, (mode, f"{label} {code}"))
        for index in self.lines.matching(text):
            mode, pattern = self.owner[index]
            fits.setdefault(mode.id, (mode, repr(pattern)))
        if not fits:
            return Recognition(None, found)
        mode, via = min(fits.values(), key=lambda fit: (fit[0].generic, self.catalogue.rank(fit[0])))
        return Recognition(mode, found, via)

    def suggest(self, text: str) -> list[FailureMode]:
        """Modes whose keywords appear in a description, specific ones first."""
        modes = {self.words[i][0].id: self.words[i][0] for i in self.keywords.matching(text)}
        return sorted(modes.values(), key=lambda m: (m.generic, self.catalogue.rank(m)))


@lru_cache(maxsize=1)
def recogniser() -> Recogniser:
    return Recogniser(catalogue())


@lru_cache(maxsize=65536)
def recognise(text: str) -> Recognition:
    """The failure mode of one log line or signature (cached: signatures repeat)."""
    return recogniser().line(text)


def recognise_all(texts: Iterable[str]) -> Recognition:
    """The one failure of several signatures of one incident: the first specific mode in the
    order the person wrote them (they paste the main error first), a generic one only when
    no specific mode is there."""
    return choose([recognise(t) for t in texts])


def choose(found: list[Recognition]) -> Recognition:
    """Of the recognitions of one incident's signatures, in their order, the one that decides."""
    known = [r for r in found if r.mode is not None]
    if not known:
        return found[0] if found else Recognition(None, Codes())
    return min(enumerate(known), key=lambda pair: (pair[1].mode.generic, pair[0]))[1]  # type: ignore[union-attr]


def suggest(text: str) -> list[FailureMode]:
    return recogniser().suggest(text)
