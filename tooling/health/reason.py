"""The drain reason the health check gives a node, written and read back in one place.

The check drains a node with one entry per failure, ``MODE EVIDENCE, INC-NNNN`` (the failure mode
of the catalogue, the evidence in a few words, the incident filed), entries joined by ``"; "``:
``gpu.fell-off-bus Xid 79 GPU 3, INC-0042``. A job that finds one of its nodes drained reads the
reason back (:func:`failures`) to tell a node whose hardware failed, which it must leave, from
one drained for another reason (an admin's maintenance, a full disk), which it may finish on.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

SEPARATOR = "; "
_ENTRY = re.compile(r"(?P<mode>[a-z0-9-]+(?:\.[a-z0-9-]+)+) (?P<evidence>.+?)(?:, (?P<incident>INC-[0-9]{4,}))?")


@dataclass(frozen=True)
class Failure:
    """One failure a drain reason names."""
    mode: str  # a failure mode id of the catalogue, as written; whether it is one is the reader's question
    evidence: str
    incident: str | None


def entry(mode: str, evidence: str, incident: str | None) -> str:
    """One failure, as the drain reason says it."""
    return f"{mode} {evidence}" + (f", {incident}" if incident else "")


def failures(reason: str) -> list[Failure]:
    """The failures ``reason`` names, in order; a part that is not one (a probe's timeout, an
    admin's own words, the tail of a cut reason) names none."""
    found = []
    for part in reason.split(SEPARATOR):
        match = _ENTRY.fullmatch(part.strip())
        if match:
            found.append(Failure(match["mode"], match["evidence"], match["incident"]))
    return found
