"""The lines a scan looks at: those one automaton of the whole catalogue flags, and what each is.

:func:`matcher` is that automaton (every recogniser of the catalogue, the code carriers, the start
of a traceback, the numbers' flags, the stops); :func:`line_start` finds a flagged line in the
chunk's buffer, :func:`clean` makes it text a record may hold, :func:`recognise_line` names its
failure mode, :class:`Flagged` is the line with what it says of itself and :func:`placed` the node
and rank it names. A launcher told to stop from outside (:func:`told_from_outside`) is a failure
of its own (:func:`stop_recognition`). Reading a flagged line is :mod:`tooling.logs.reader`'s.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from tooling.catalogue.codes import Codes
from tooling.catalogue.statuses import CUDA_NUMBERED, NCCL_RETURNED
from tooling.catalogue.signals import SIGNAL_NAMED
from tooling.catalogue.engine import Matcher
from tooling.catalogue.evidence import named_modes
from tooling.catalogue.modes import catalogue
from tooling.catalogue.recognise import Recognition, recogniser
from tooling.logs import blocks, frames, unknown
from tooling.logs.context import Context
from tooling.logs.numbers import FLAGS
from tooling.logs.unknown import UNCLASSIFIED
from tooling.records.characters import first_bad

MAX_LINE = 2000  # characters of a line kept as a signature
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")  # colour and cursor sequences of a terminal log

# Lines that carry a code a mode may own (Xid 48, [Errno 122], exit code 137) whatever their
# words: recognise() decides from the code, and drops the line when no mode owns it.
CARRIERS = (r"\bxid\b", r"rc all channels for critical error", r"errno", r"exit ?(code|status)|exitcode|exit(s|ed) with")


@dataclass(frozen=True)
class Flagged:
    """A flagged line: its text, what it says of itself, where it starts in the buffer, its number."""
    text: str
    where: Context
    start: int
    line: int


@lru_cache(maxsize=1)
def matcher() -> Matcher:
    """Every recogniser of the catalogue, the code carriers, the start of a traceback and a native
    stack frame (tooling.logs.frames), in one automaton."""
    patterns = [p for mode in catalogue().modes for p in mode.recognisers]
    return Matcher([*patterns, *CARRIERS, CUDA_NUMBERED, SIGNAL_NAMED, NCCL_RETURNED, blocks.TRACEBACK_PATTERN, *FLAGS,
                    unknown.STOPS, *frames.PATTERNS])


@lru_cache(maxsize=4096)
def recognise_line(key: str) -> Recognition:
    """Bounded cache: the shared one would keep up to 65,536 lines of a big log alive."""
    return recogniser().line(key)


def clean(line: str) -> str:
    """A line as text a record may hold: terminal colour codes dropped, a tab made a space, other
    control characters made U+FFFD (as bytes that are not UTF-8 already are), cut at MAX_LINE
    characters."""
    text = _ANSI.sub("", line).replace("\t", " ")
    if len(text) > MAX_LINE:
        text = text[:MAX_LINE] + " …"
    while (bad := first_bad(text)) is not None:
        text = text[:bad[0]] + "\ufffd" + text[bad[0] + 1:]
    return text


def line_start(buffer: bytearray, end: int) -> int:
    """Where the line of a match that ends at ``end`` starts: after the line break before it, or
    after the last NUL byte before it on its line (a crash's padding: what follows was written
    after the crash, a line of its own)."""
    start = buffer.rfind(b"\n", 0, end - 1) + 1
    return buffer.rfind(b"\0", start, end - 1) + 1 or start


def placed(where: Context) -> tuple[list[str], list[int]]:
    """The node and the rank a line says it was written on, as lists a hit gathers."""
    return ([where.host] if where.host else []), ([where.rank] if where.rank is not None else [])


def told_from_outside(message: str, recognition: Recognition) -> bool:
    """A launcher told to stop from outside (unknown.told_from_outside), in a line no specific mode
    names: the stop is the failure; the launcher's lines that carry it out (torchrun's "Sending
    process N closing signal SIGTERM", which process.child-failed's recognisers read) are its
    aftermath (tooling.logs.aftermath), as is the stop of a failure near it (a preemption)."""
    return (recognition.mode is None or recognition.mode.generic) and unknown.told_from_outside(message)


def stop_recognition(text: str) -> Recognition:
    """A stop told from outside as the failure of ``text``: no mode names it."""
    return Recognition(catalogue().get(UNCLASSIFIED), None, "a stop it was told from outside", text)

_FUNCTION = re.compile(r", line [0-9]+, in (\S+)")


def raised_in(frame: str, codes: Codes | None) -> Recognition:
    """An exception whose words no mode names, by the frame it was raised in (blocks.innermost_frame):
    the one specific mode that frame's names say by their keywords (a ``TCPStore`` built in the
    rendezvous handler: ranks that could not meet), else a bug in the training code or a library."""
    named = named_modes(frame) if frame else []
    if len(named) == 1:
        function = _FUNCTION.search(frame)
        return Recognition(named[0], codes, f"an exception raised in {function.group(1) if function else 'its frame'}")
    return Recognition(catalogue().get("software.bug"), codes, "a traceback")
