"""The errno a log line carries, however it is written: a number (``[Errno 28]``, ``errno=122``),
a name (``ENOSPC``) or the C library's message for it (``No space left on device``), as Python
and most tools print it.

The messages are matched all at once by one automaton (:class:`~tooling.catalogue.engine.Matcher`);
recognising scans them within its own (:mod:`tooling.catalogue.recognise`, which takes
:data:`ERRNO_MESSAGES` and :func:`errno_of_message`). The other codes of a line are
:mod:`tooling.catalogue.codes`.
"""
from __future__ import annotations

import errno as errno_module
import os
import re
from functools import lru_cache

from tooling.catalogue.engine import Matcher

# a number or a name (read by the site's lookup too, tooling.site.lookup). errno names (ENOSPC)
# are upper case: matching them case-sensitively skips every word that merely starts with an "e"
# ("error", "eval"), which was most of this pattern's cost
ERRNO = re.compile(r"\[errno\s*([0-9]{1,4})\]|\berrno\s*[:=]?\s*([0-9]{1,4})\b|(?-i:\b(E[A-Z]{2,12})\b)", re.IGNORECASE)
ERRNO_NAME = re.compile(r"\bE[A-Z]{2}")  # where an errno name (ENOSPC) may be: most prose has none

_BY_NAME = {name: number for number, name in errno_module.errorcode.items()}
# the C library's message for each errno, as Python prints it: "No space left on device" -> 28
_BY_MESSAGE = {os.strerror(n).lower(): n for n in errno_module.errorcode if os.strerror(n)
               and not os.strerror(n).startswith("Unknown error")}
_MESSAGE_LIST = sorted(_BY_MESSAGE)


ERRNO_MESSAGES = [re.escape(m) for m in _MESSAGE_LIST]  # as patterns: recognising scans them with its own


def errno_of_message(index: int) -> int:
    """The errno whose message is ``ERRNO_MESSAGES[index]``."""
    return _BY_MESSAGE[_MESSAGE_LIST[index]]


@lru_cache(maxsize=1)
def _messages() -> Matcher:
    """Every errno message at once: one automaton instead of a 130-way regex alternation."""
    return Matcher(ERRNO_MESSAGES, first_only=True)


def errnos(text: str, lower: str, *, messages: bool = True) -> list[int]:
    """The errnos ``text`` (``lower``: the same, lower case) writes as codes, and, with
    ``messages``, by their messages."""
    found = []
    # most lines quote no errno: two substring tests spare them the expression's scan
    written = "errno" in lower or ("E" in text and ERRNO_NAME.search(text) is not None)
    for match in ERRNO.finditer(text) if written else ():
        number = match.group(1) or match.group(2)
        name = match.group(3)
        if number:
            found.append(int(number))
        elif name and name.upper() in _BY_NAME and name.isupper():
            found.append(_BY_NAME[name.upper()])
    if messages:
        found += [errno_of_message(i) for i in _messages().matching(text)]
    return found
