"""Codes that keep two incidents of one failure mode apart: the same key, different errors.

A key (:mod:`tooling.analysis.identity`) is a failure mode with what its ``distinguish`` names. Two
incidents with one key whose lines carry codes of the same family, and no code of that family in
common, are two failures a logbook keeps apart (an NVLink failure that CUDA reported as an
uncorrectable NVLink error, and one it reported as a contained error; a NIC that went down under
``ncclSystemError``, and one under ``ncclInternalError``), whatever their mode says; they may still be the same automation's
(:mod:`tooling.analysis.levels`). An incident with no such code, or one code in common, is judged by
its key alone, as before.

The families, each read by the existing readers (:func:`tooling.catalogue.codes.codes`) and compared
as the failures they name, not as spellings:

- ``xid``: an Xid stands for the mode that owns it (``xid:`` in the catalogue), so the Xids of one mode
  are one failure (63 and 64 are the row remapper on the same failing memory, 144-150 units of one
  NVLink); an Xid of another mode is another failure (an Xid 79 where the other incident had Xid 74).
- ``cuda``: a CUDA error stands for the mode the catalogue recognises it as (an out-of-memory by
  name, in words or cuBLAS's ALLOC_FAILED is one), else for its name in any spelling
  (:func:`tooling.catalogue.statuses.cuda_error_name`); words CUDA's table does not know compare only
  with words.
- ``nccl``: an ``ncclResult_t`` by name (NCCL's own words are read as the name; function names such
  as ``ncclCommInitRank`` are no result), each result its own failure: the catalogue's NCCL modes
  hold several results.

Exit statuses, errnos and signals are left out: the catalogue's modes own them already, and a
launcher's exit status is what killed the process, not which failure it was.

An incident carries several codes when one error follows another: an Xid 79 after the Xid 74 that
took the GPU off the bus, an ``ncclUnhandledCudaError`` after the CUDA error. Where one of a
family's codes is the incident's own mode, that one alone speaks for it (the rest followed);
otherwise all of them do, and one in common with the other incident is enough to call them one
failure. The description (title, keywords, root cause) speaks for a family only where no signature
carries one: the lines are the evidence, a person's words a summary of them.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable

from tooling.analysis.identity import Identity
from tooling.catalogue.codes import CUDA_MARKS, NCCL_MARKS, XID_MARKS, identifying, library_errors
from tooling.catalogue.evidence import description
from tooling.catalogue.recognise import recognise, recogniser
from tooling.catalogue.statuses import NCCL_RESULTS, cuda_error_name, cuda_named_in_words

Coded = dict[str, frozenset[str]]  # family -> the failures its codes name ("mode:gpu.nvlink-error", "cuda:contained")
WORDS = "words:"  # a CUDA error in words no table knows: comparable only with other such words
_RESULTS = frozenset(NCCL_RESULTS.values())
FAMILIES = ("xid", "cuda", "nccl")
# the words without which a text holds no code of a family (as codes() reads them): most lines and
# titles hold none, and looking for the words costs far less than reading every code of the text
_LIBRARY_MARKED = re.compile("|".join(map(re.escape, (*CUDA_MARKS, *NCCL_MARKS))))
_XID_MARKED = re.compile("|".join(map(re.escape, XID_MARKS)))


def coded(identity: Identity, data: dict[str, Any]) -> Coded:
    """The failures each family's codes name for an incident of ``identity`` (its fields ``data``);
    empty where its key names no mode."""
    if identity.key is None or identity.key[0] != "mode" or identity.mode is None:
        return {}
    own = f"mode:{identity.mode.id}"
    lines = identity.recognised  # their Xids were read when they were recognised
    found = _named([x for line in lines for x in line.identifying["xid"]],
                   [_errors(line.text) for line in lines])
    if len(found) < len(FAMILIES):  # a family no line carries: the description's, if it quotes one
        said = description(data)
        xids = identifying(said, messages=False)["xid"] if _XID_MARKED.search(said.lower()) else ()
        quoted = _named(list(xids), [_errors(said)])
        found = {**quoted, **found} if quoted else found
    return {family: frozenset([own]) if own in names else names for family, names in found.items()}


def _errors(text: str) -> dict[str, tuple[str, ...]]:
    lower = text.lower()
    return library_errors(text, lower) if _LIBRARY_MARKED.search(lower) else {}


def apart(one: Coded, other: Coded) -> bool:
    """Whether two incidents of one key carry codes of one family with none in common."""
    for family in one.keys() & other.keys():
        mine, theirs = one[family], other[family]
        if not mine & theirs and _comparable(mine, theirs):
            return True
    return False


def _comparable(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    """Words no table knows may be any named error: they say nothing against a name."""
    def words(names: frozenset[str]) -> bool:
        return any(n.startswith(WORDS) for n in names)

    def named(names: frozenset[str]) -> bool:
        return any(not n.startswith(WORDS) for n in names)

    return not (words(mine) and named(theirs) or named(mine) and words(theirs))


def _named(xids: list[int], carried: list[dict[str, tuple[str, ...]]]) -> Coded:
    """Family -> the failures these Xids, CUDA errors and NCCL names (:func:`library_errors`) name."""
    if not xids and not any(carried):  # most incidents: nothing to build
        return {}
    found: dict[str, set[str]] = {}
    for xid in xids:
        owner = recogniser().by_code.get(("xid", xid))
        found.setdefault("xid", set()).add(f"mode:{owner.id}" if owner else f"xid:{xid}")
    for each in carried:
        for error in (e for e in each.get("cuda", ()) if not e.endswith("SUCCESS")):  # a glog CHECK's other side
            found.setdefault("cuda", set()).add(_cuda(error))
        for result in (r for r in each.get("nccl", ()) if r in _RESULTS):
            found.setdefault("nccl", set()).add(f"nccl:{result}")
    return {family: frozenset(names) for family, names in found.items()}


@lru_cache(maxsize=4096)
def _cuda(error: str) -> str:
    """The failure a CUDA error names: its mode (as written, or by the name its words stand for),
    else its name in any spelling, else its words."""
    for spelt in dict.fromkeys((error, cuda_named_in_words(error) or error)):
        mode = recognise(spelt).mode
        if mode is not None and not mode.generic:
            return f"mode:{mode.id}"
    name = cuda_error_name(error)
    return f"cuda:{name}" if name is not None else f"{WORDS}{error}"


class Placed:
    """The incidents of each key seen so far, one for each set of codes they carry: whom a new
    incident of the key joins, and whom it is kept apart from. Codes are read only for keys seen
    twice: most keys of a large repository are one incident, and reading codes costs."""

    def __init__(self, read: Callable[[str], Coded]) -> None:
        self.reader = read  # incident -> its codes (:func:`coded`, or what was kept of it)
        self.seen: dict[tuple[str, ...], list[tuple[str, Coded]]] = {}  # key -> (incident, its codes)
        self.read: dict[str, Coded] = {}  # incident -> its codes, read once

    def codes(self, incident: str) -> Coded:
        if incident not in self.read:
            self.read[incident] = self.reader(incident)
        return self.read[incident]

    def place(self, incident: str, key: tuple[str, ...], first: str) -> tuple[list[str], list[str]]:
        """(incidents to join, incidents to keep apart from) for ``incident``, whose key ``first`` had first."""
        seen = self.seen.get(key) or self.seen.setdefault(key, [(first, self.codes(first))])
        mine = self.codes(incident)
        if not mine:
            return [first], []  # no code: judged by the key alone
        keep = [other for other, theirs in seen if apart(mine, theirs)]
        join = [other for other, theirs in seen if other not in keep]
        if all(theirs != mine for _, theirs in seen):
            seen.append((incident, mine))
        return join, keep
