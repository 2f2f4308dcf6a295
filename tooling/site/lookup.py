"""The home page's lookup: the catalogue's recognisers, precomputed for the reader's browser.

An engineer types or pastes what they see ("Xid 79", "NCCL timeout", a whole dmesg line) and
docs/assets/javascripts/lookup.js names the failure mode, as :class:`tooling.catalogue.recognise.Recogniser`
does: the codes a line quotes (Xid, errno, exit status) and the recognisers decide, the first
specific mode in catalogue order winning; where none does, the modes whose keywords the words use
are suggested. This module writes what the script needs as one JSON document, embedded in the page
(no request, works offline): each mode's recognisers and keywords as JavaScript regular
expressions, the codes each mode owns, the expressions that read codes, and those that read the
codes a line writes by number with the tables that name them (a CUDA error, a glog CHECK's value,
a signal, the error NCCL's return trace passes up: tooling.catalogue.statuses, .signals). A pattern that
JavaScript would read differently is handed over as its words instead (all must appear).
tests/test_lookup_data.py runs the same matching in Python over this JSON against the catalogue's
proven log lines.
"""
from __future__ import annotations

import errno as errno_module
import functools
import json
import os
import re
from typing import Any

from markupsafe import Markup

from tooling.catalogue import codes as code_patterns
from tooling.catalogue import recognise, signals, statuses
from tooling.catalogue.errnos import ERRNO
from tooling.catalogue.modes import Catalogue, catalogue

# Python syntax JavaScript lacks or reads otherwise: named groups, look-around, inline flags,
# \A \Z, possessive and atomic quantifiers, {,n}, POSIX classes
_NOT_JS = re.compile(r"\(\?[P<=!#>a-zA-Z-]|\\[AZzQ]|[*+?}]\+|\{,|\[\[:")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")


@functools.cache  # the catalogue's 734 patterns at every build: more than re's own cache of 512 keeps
def js_pattern(pattern: str) -> str | None:
    """``pattern`` as a JavaScript expression (flags "im", as the catalogue's re.I | re.M), or None
    where JavaScript would read it otherwise."""
    if _NOT_JS.search(pattern):
        return None
    try:
        re.compile(pattern)
    except re.error:
        return None
    return pattern


def pattern_words(pattern: str) -> list[str]:
    """The words of a pattern JavaScript cannot run, lower case: a line must hold them all."""
    return [w.lower() for w in _WORD.findall(re.sub(r"\\[a-zA-Z]", " ", pattern))]


def _matchers(patterns: tuple[str, ...]) -> dict[str, list[Any]]:
    translated = [(p, js_pattern(p)) for p in patterns]
    return {"regex": [js for _, js in translated if js is not None],
            "words": [pattern_words(p) for p, js in translated if js is None]}


def _owned(modes: Catalogue) -> dict[str, dict[str, str]]:
    return {kind: {str(code): m.id for m in modes.modes for code in getattr(m, field)}
            for kind, field in (("xid", "xid"), ("errno", "errno"), ("exit", "exit_codes"))}


def _expression(compiled: re.Pattern[str]) -> dict[str, Any]:
    """A compiled expression for the script's loop over its matches: its source with plain groups
    (ES5 has no named ones), each named group's number, and its flags."""
    return {"source": re.sub(r"\(\?P<\w+>", "(", compiled.pattern), "groups": dict(compiled.groupindex),
            "flags": "gi" if compiled.flags & re.IGNORECASE else "g"}


def _numbered() -> dict[str, dict[str, Any]]:
    """What reads the codes a line writes by number, each with the names its numbers stand for."""
    def keyed(table: dict[int, str]) -> dict[str, str]:
        return {str(number): name for number, name in table.items()}
    return {
        "cuda": {"expression": _expression(statuses._CUDA_NUMBER), "names": keyed(statuses.CUDA_RUNTIME)},
        "checked": {"expression": _expression(statuses._CHECKED),
                    "names": {success: keyed(table) for success, table in statuses.SUCCESS.items()}},
        "signal": {"expression": _expression(signals.NAMED),
                   "names": {str(number): list(named) for number, named in signals.DESCRIBED.items()}},
        # the scan reads an INFO line of NCCL's only for this trace (tooling.logs.reader)
        "returned": {"expression": _expression(re.compile(statuses.NCCL_RETURNED)),
                     "names": keyed(statuses.NCCL_RESULTS)},
    }


def lookup_data(modes: Catalogue | None = None) -> dict[str, Any]:
    """What lookup.js reads (see the module's docstring)."""
    modes = modes or catalogue()
    owned = _owned(modes)
    errnos = {int(n) for n in owned["errno"]}
    return {
        "modes": [{"id": m.id, "generic": m.generic, "recognisers": _matchers(m.recognisers),
                   "keywords": _matchers(m.keywords)} for m in modes.modes],
        "owned": owned,
        # the expressions that read codes (tooling.catalogue.codes, .errnos), all case-insensitive
        "xid": code_patterns._XID.pattern,
        "exit": code_patterns._EXIT.pattern,
        "errno": ERRNO.pattern.split("|(?-i:")[0],  # its numbers; the names below
        # errno names are matched case-sensitively (ENOSPC, not "enospc"), messages as words
        "errnoNames": {name: n for n, name in errno_module.errorcode.items() if n in errnos},
        "errnoMessages": {os.strerror(n).lower(): n for n in sorted(errnos)},
        "numbered": _numbered(),
        # a list of the causes a failure might have asserts none: a line is read up to it (recognise.asserted)
        "candidates": recognise._CANDIDATES.pattern,
        # clauses that clear something of blame name no failure (recognise.affirmed)
        "cleared": recognise._CLEARED.pattern,
        "clause": recognise._CLAUSE.pattern,
    }


def lookup_json(modes: Catalogue | None = None) -> Markup:
    """:func:`lookup_data` as the text of a ``<script type="application/json">``: nothing in it
    can end the element or open a comment."""
    text = json.dumps(lookup_data(modes), ensure_ascii=False, separators=(",", ":"))
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))
