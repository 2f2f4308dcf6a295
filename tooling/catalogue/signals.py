"""Signals a line names by their number and the C library's description of it, read as the names
the catalogue's recognisers know: Open MPI's signal handler writes ``Signal: Aborted (6)`` and
``Signal: Segmentation fault (11)``, UCX ``Caught signal 7 (Bus error: nonexistent physical
address)``, a shell ``exited on signal 9 (Killed)``. A recogniser reads ``SIGABRT`` or ``signal 11``;
a handler's wording, in either order, is the same signal. The number counts only where its
description is the one the C library gives it (:func:`signal.strsignal`), so a count in brackets
after a word is not read as a signal.
"""
from __future__ import annotations

import re
import signal

# for the scan's automaton (Hyperscan's subset): a number and a description, in either order
SIGNAL_NAMED = r"signal:? *([0-9]{1,2} *\([a-z]|[a-z][a-z ]{2,40}\([0-9]{1,2}\))"
# the same in full (also handed to the home page's lookup, tooling.site.lookup)
NAMED = re.compile(r"\bsignal:?\s*(?:(?P<number>[0-9]{1,2})\s*\((?P<after>[A-Za-z][A-Za-z ]{2,40})"
                   r"|(?P<before>[A-Za-z][A-Za-z ]{2,40}?)\s*\((?P<last>[0-9]{1,2})\))", re.IGNORECASE)


def _described() -> dict[int, tuple[str, str]]:
    """Number -> (name, the C library's description in lower case) of each signal a line may number."""
    found = {}
    for number in range(1, 100):  # SIGNAL_NAMED's one or two digits
        try:
            name, known = signal.Signals(number).name, (signal.strsignal(number) or "").lower()
        except ValueError:
            continue  # no such signal
        if known:
            found[number] = (name, known)
    return found


# read once: the home page's lookup is handed the same table (tooling.site.lookup)
DESCRIBED = _described()


def signal_named(text: str) -> list[tuple[int, str]]:
    """(number, name: ``SIGABRT``) of each signal the line names by number and description."""
    if "signal" not in text.lower():
        return []
    found = []
    for match in NAMED.finditer(text):
        number = int(match.group("number") or match.group("last"))
        description = (match.group("after") or match.group("before") or "").strip().lower()
        name, known = DESCRIBED.get(number, ("", ""))
        if known and description.startswith(known):
            found.append((number, name))
    return found
