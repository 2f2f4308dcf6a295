"""Which failure mode a log line, a signature or a description is.

A line is *recognised* when a recogniser of a mode matches it or it carries a code the mode owns
(an Xid, an errno, an exit status): that decides. A description (a title, a note, a paraphrase)
only *suggests* modes through their keywords. When several modes fit, the first specific one in
catalogue order wins; the generic catch-alls only when nothing else fits.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

from tooling.catalogue.codes import Codes, codes, identifying
from tooling.catalogue.errnos import ERRNO_MESSAGES, ERRNO_NAME, errno_of_message
from tooling.catalogue.engine import Matcher
from tooling.catalogue.signals import signal_named
from tooling.catalogue.statuses import checked, cuda_named
from tooling.catalogue.hangul import nfc
from tooling.catalogue.literals import any_of
from tooling.catalogue.modes import Catalogue, FailureMode, catalogue


# what a recognition's ``via`` starts with when a code, not the line's words, named its mode
CODE_LABELS = {"Xid": "xid", "errno": "errno", "exit": "exit"}


class Recognition:
    """The failure mode of a line (None: no mode fits), what decided it, and the line's codes,
    extracted only when asked for: most recognitions only need the mode."""

    def __init__(self, mode: FailureMode | None, found: Codes | None = None, via: str = "",
                 text: str = "", identified: dict[str, tuple[int, ...]] | None = None,
                 routine: FailureMode | None = None) -> None:
        self.mode, self.via, self._codes, self._text = mode, via, found, text
        self._identifying = identified
        self.routine = routine  # the mode whose routine message the line is, found in the same scan

    @property
    def text(self) -> str:
        """The line its codes are read from (recognised by its shape: digits of no code as 0)."""
        return self._text

    @property
    def codes(self) -> Codes:
        if self._codes is None:
            self._codes = codes(self._text)
        return self._codes

    @property
    def identifying(self) -> dict[str, tuple[int, ...]]:
        """The codes that name a mode by themselves (Xid, errno, exit): kept from recognising."""
        if self._identifying is None:
            self._identifying = identifying(self._text) if self._codes is None else \
                {kind: getattr(self._codes, kind) for kind in ("xid", "errno", "exit")}
        return self._identifying

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Recognition) and (self.mode, self.via, self.codes) == (other.mode, other.via, other.codes)

    def __hash__(self) -> int:
        return hash((self.mode.id if self.mode else None, self.via))

    def __repr__(self) -> str:
        return f"Recognition({self.mode.id if self.mode else None!r}, via={self.via!r})"

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
        # errno messages ("No space left on device") and routine messages in the same automaton:
        # one scan of a line finds its modes, the errnos it names in words and what is routine
        self.routines = [mode for mode in modes.modes for _ in mode.routine]
        routine = [p for mode in modes.modes for p in mode.routine]
        self.lines = Matcher([p for _, p in self.owner] + ERRNO_MESSAGES + routine, first_only=True)
        self.words = [(mode, pattern) for mode in modes.modes for pattern in mode.keywords]
        self.keywords = Matcher([p for _, p in self.words], first_only=True)
        self.routine = Matcher(routine, first_only=True)  # for descriptions, which are not lines
        self.by_code = {(kind, code): mode for mode in modes.modes
                        for kind, values in (("xid", mode.xid), ("errno", mode.errno), ("exit", mode.exit_codes))
                        for code in values}

    def line(self, text: str) -> Recognition:
        text = asserted(text)
        found, matched, known = identifying(text, messages=False), self.lines.matching(text), len(self.owner)
        errnos = known + len(ERRNO_MESSAGES)
        said = [errno_of_message(i - known) for i in matched if known <= i < errnos]
        routine = next((self.routines[i - errnos] for i in matched if i >= errnos), None)
        if said:
            found["errno"] = tuple(dict.fromkeys([*found["errno"], *said]))
        fits = self.coded(found)
        for index in (i for i in matched if i < known):
            mode, pattern = self.owner[index]
            fits.setdefault(mode.id, (mode, repr(pattern)))
        # a code written by its number (a CUDA error, a glog CHECK's value, a signal with its
        # description): as by its name
        named = [*((f"CUDA error {number} ({name})", name) for number, name in cuda_named(text)),
                 *((f"{success} check: {value} is {name}", name) for success, value, name in checked(text)),
                 *((f"signal {number} ({name})", name) for number, name in signal_named(text))]
        for via, name in named:
            for index in (i for i in self.lines.matching(name) if i < known):
                fits.setdefault(self.owner[index][0].id, (self.owner[index][0], via))
        if not fits:
            return Recognition(None, text=text, identified=found, routine=routine)
        mode, via = min(fits.values(), key=lambda fit: (fit[0].generic, self.catalogue.rank(fit[0])))
        return Recognition(mode, via=via, text=text, identified=found, routine=routine)

    def coded(self, found: dict[str, tuple[int, ...]]) -> dict[str, tuple[FailureMode, str]]:
        """Mode id -> (mode, "Xid 79") for each code of ``found`` (see ``identifying``) a mode owns."""
        fits: dict[str, tuple[FailureMode, str]] = {}
        for label, kind in CODE_LABELS.items():
            for code in found[kind]:
                mode = self.by_code.get((kind, code))
                if mode is not None:
                    fits.setdefault(mode.id, (mode, f"{label} {code}"))
        return fits

    def routine_of(self, text: str) -> FailureMode | None:
        """The first mode (in catalogue order) whose routine message a text says, if any."""
        found = self.routine.matching(text) if self.routines else []
        return self.routines[min(found)] if found else None

    def suggest(self, text: str) -> list[FailureMode]:
        """Modes whose keywords appear in a description, specific ones first (Korean keywords
        are composed syllables: a description typed decomposed is composed before matching)."""
        return [mode for mode, _ in self.suggest_counted(text)]

    def suggest_counted(self, text: str) -> list[tuple[FailureMode, int]]:
        """:meth:`suggest`, each mode with how many of its keywords the description uses."""
        modes: dict[str, list] = {}  # type: ignore[type-arg]
        for index in self.keywords.matching(affirmed(nfc(text))):
            mode = self.words[index][0]
            modes.setdefault(mode.id, [mode, 0])[1] += 1
        ranked = sorted(modes.values(), key=lambda pair: (pair[0].generic, self.catalogue.rank(pair[0])))
        return [(mode, count) for mode, count in ranked]


# A clause that says something was fine, or ruled it out, names no failure: "gpu and cpu memory
# looked fine", "NCCL ruled out", "disk was not the issue", "not a preemption", "preemption not
# expected on this pool", "no scheduled maintenance", "there is no thermal issue". Only such clauses go: a
# leading "no" or "not" is often the failure itself ("no space left", "not responding").
_CLAUSE = re.compile(r"[^,.;:!?\n()\u2013\u2014]+")  # a dash between words ends a clause too
_CLEARED = re.compile(r"\b(?:looked|looks|look|was|were|is|are|seemed|seems|stayed|remained|checked out)"
                      r"(?: (?:all|perfectly|completely|totally))? (?:fine|ok|okay|normal|healthy|good|clean)\b"
                      r"|\bruled out\b|\brules out\b|\b(?:not|n't) (?:the|a) (?:cause|culprit|issue|problem)\b"
                      r"|\bno (?:sign|evidence|trace) of\b|\bnot (?:a|an)\b|\bnot expected\b"
                      r"|\bno (?:scheduled|planned|announced)\b|\bno (?:\w+[ -]){1,2}(?:issues?|problems?)\b",
                      re.IGNORECASE)


# A list of the causes a failure might have asserts none of them: Ray's "There are some potential
# root causes. (1) The process is killed by SIGKILL by OOM killer ... (3) ... due to SIGSEGV", "the
# possible reasons are". What comes after such a clause is guesswork; the line is read up to it.
_CANDIDATES = re.compile(r"\b(?:potential|possible|probable|likely) (?:root )?(?:causes|reasons)\b", re.IGNORECASE)


def asserted(text: str) -> str:
    """``text`` up to a clause that lists the causes it might have (see _CANDIDATES)."""
    found = _CANDIDATES.search(text)
    return text if found is None else text[:found.start()]


def affirmed(text: str) -> str:
    """``text`` without the clauses that clear something of blame (see _CLEARED)."""
    if _CLEARED.search(text) is None:
        return text
    return _CLAUSE.sub(lambda clause: "" if _CLEARED.search(clause.group(0)) else clause.group(0), text)


@lru_cache(maxsize=1)
def recogniser() -> Recogniser:
    return Recogniser(catalogue())


_DIGITS = re.compile(r"[0-9]{4,}")  # steps, PIDs, sequence numbers; short numbers can be codes
# where numbers are codes (Xid 79, [Errno 28], exit code 137, status=12) or a count that names the
# failure (2016/2048 clients joined: a store overwhelmed at scale; a tensor's shape, where torch.Size([0])
# is a sharded engine's empty placeholder and torch.Size([1024]) a parameter): such lines keep them
_NUMBERED_CODES = ("xid", "errno", "exit", "sig", "status", "completion", "code", "clients joined", "torch.size")
_ANY_NUMBERED_CODE = any_of(_NUMBERED_CODES)


def recognise(text: str) -> Recognition:
    """The failure mode of one log line or signature. Cached by the line's shape: the same line
    with another step, rank, PID or address is recognised the same, and lines repeat so."""
    lower = text.lower()
    shape = text if _ANY_NUMBERED_CODE.search(lower) else _DIGITS.sub("0", text)
    return _recognise_shape(shape)


@lru_cache(maxsize=65536)
def _recognise_shape(text: str) -> Recognition:
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


def suggest_counted(text: str) -> list[tuple[FailureMode, int]]:
    return recogniser().suggest_counted(text)


_CODE_MARKERS = ("xid", "errno", "exit")  # a code identifying() reads without its message follows one


def coded(text: str) -> list[FailureMode]:
    """The modes that own a code a text quotes ("exited with code 137", "Xid 79 again"): a code
    names its mode wherever it is written, a description too. An errno's message in prose ("no
    space left") is a paraphrase: the keywords of its mode already read it."""
    lower = text.lower()
    if not (any(m in lower for m in _CODE_MARKERS) or ERRNO_NAME.search(text)):
        return []  # most prose quotes no code: spare it the extraction
    return [mode for mode, _ in recogniser().coded(identifying(text, messages=False)).values()]

