"""A running job's nodes as the scheduler sees them: which one the node health check drained for
a hardware fault, and the job's requeue when one was, so that SLURM places it on a spare.

Why the job requeues itself: a drain only keeps new jobs off a node; the job already there goes
on (DRAINING) until it ends. SLURM requeues a ``--requeue`` job by itself only when a node stops
answering (NODE_FAIL). A GPU that fell off the bus leaves slurmd answering: the rank on it is
dead or computing on broken memory, and the other ranks wait in their next collective until its
timeout (NCCL's: 10 to 30 minutes), the whole allocation idle. So ``tooling job`` looks at the
job's nodes every few seconds (:class:`NodeWatch`); a node drained with a reason that names a
failure mode the catalogue serves with the node drain (``gpu-xid-drain``: Xid 79, 48, 63, 64,
ECC, row remapping; :mod:`tooling.health.reason` reads it) makes it requeue the job. A node
drained for anything else (an admin's maintenance, a full disk) is left to finish the job on:
requeueing for those would throw away the work of every node for nothing.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from tooling.health.faults import DRAIN_AUTOMATION
from tooling.health.reason import Failure, failures
from tooling.programs import bounded, find

SCONTROL_SECONDS = 10.0
SINFO_FORMAT = "%N|%T|%H|%E"  # node, state (long), when the reason was set, the reason
GONE = ("drain", "down", "fail")  # a state with one of these words keeps new jobs off the node


@dataclass(frozen=True)
class NodeState:
    node: str
    state: str  # sinfo's long state, lower case: allocated, draining, drained, down, ...
    since: datetime | None  # when the reason was set (local time)
    reason: str


@dataclass(frozen=True)
class Lost:
    """A node of the job whose hardware failed, as its drain reason says."""
    node: str
    since: datetime | None
    reason: str
    failure: Failure  # the reason's first failure of the node's hardware


def parse_sinfo(text: str) -> list[NodeState]:
    """``sinfo -h -N -o SINFO_FORMAT``'s lines; a line that is not one is skipped."""
    found = []
    for line in text.splitlines():
        parts = line.split("|", 3)
        if len(parts) != 4 or not parts[0]:
            continue
        node, state, since, reason = parts
        try:
            at: datetime | None = datetime.fromisoformat(since).astimezone()  # sinfo's local time, no offset
        except ValueError:  # "Unknown", "none"
            at = None
        found.append(NodeState(node, state.strip().lower().rstrip("*~#!%$@^-"), at,
                               "" if reason == "none" else reason.strip()))
    return found


def hardware(failures_named: list[Failure]) -> Failure | None:
    """The first failure of the node's own hardware: a mode the catalogue serves with the drain."""
    from tooling.catalogue.modes import catalogue  # read once a node is drained: a healthy job never loads it

    known = catalogue()
    for failure in failures_named:
        mode = known.get(failure.mode)
        if mode is not None and mode.automation == DRAIN_AUTOMATION:
            return failure
    return None


def lost(states: list[NodeState]) -> list[Lost]:
    """The nodes out of service for a hardware failure that their reason names."""
    found = []
    for state in states:
        if not any(word in state.state for word in GONE):
            continue
        failure = hardware(failures(state.reason))
        if failure is not None:
            found.append(Lost(state.node, state.since, state.reason, failure))
    return found


def node_states(nodelist: str, *, timeout: float = SCONTROL_SECONDS) -> list[NodeState] | str:
    """What sinfo says of the nodes of ``nodelist`` (n[1-3]); or why it could not say."""
    program = find("sinfo")
    if program is None:
        return "sinfo not found"
    answer = bounded([program, "-h", "-N", "-n", nodelist, "-o", SINFO_FORMAT], timeout=timeout, apart=True)
    if answer.status is None:
        return f"sinfo gave no answer within {timeout:g} s"
    if answer.status != 0:
        return f"sinfo exit {answer.status}: {(answer.errors or answer.output).strip()}"
    return parse_sinfo(answer.output)


def requeue(slurm_id: str, *, timeout: float = SCONTROL_SECONDS) -> str | None:
    """Ask SLURM to requeue the job (it ends it, and starts it again once nodes are free); what
    went wrong, or None."""
    program = find("scontrol")
    if program is None:
        return "scontrol not found"
    answer = bounded([program, "requeue", slurm_id], timeout=timeout)
    if answer.status is None:
        return f"scontrol requeue gave no answer within {timeout:g} s"
    return f"scontrol requeue exit {answer.status}: {answer.output.strip()}" if answer.status else None


class NodeWatch:
    """Looks at the job's nodes once per ``every`` seconds; each lost node is reported once."""

    def __init__(self, nodelist: str, every: float) -> None:
        self.nodelist, self.every = nodelist, every
        self._due = time.monotonic() + every
        self._reported: set[str] = set()
        self.problem: str | None = None  # the last look's, when sinfo could not say

    def look(self, *, force: bool = False) -> list[Lost]:
        """The nodes lost since the last look, when a look is due (``force``: now)."""
        now = time.monotonic()
        if not force and now < self._due:
            return []
        self._due = now + self.every
        states = node_states(self.nodelist)
        if isinstance(states, str):
            self.problem = states
            return []
        self.problem = None
        found = [gone for gone in lost(states) if gone.node not in self._reported]
        self._reported.update(gone.node for gone in found)
        return found
