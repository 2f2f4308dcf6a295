"""What a probe of the node health check found, and how each probe ended."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tooling.catalogue.modes import FailureMode
    from tooling.logs.drafts import Draft

# The catalogue's "drain and swap a failing GPU node automatically": a kernel line whose failure
# mode it serves is a fault of the node (an Xid 79, an ECC error, a machine check); other failures
# the kernel reports (a job's OOM kill) are the job's, not the node's.
DRAIN_AUTOMATION = "gpu-xid-drain"
CAPACITY_AUTOMATION = "storage-capacity-guard"  # its thresholds: the file-system probe's warnings


def mode(mode_id: str) -> FailureMode:
    """A failure mode of the catalogue, by id (the probes that name their mode themselves)."""
    from tooling.catalogue.modes import catalogue  # loaded once a fault is found: a healthy check needs none of it

    found = catalogue().get(mode_id)
    assert found is not None, f"no failure mode {mode_id} in the catalogue"
    return found


def capacity_thresholds() -> tuple[int, ...]:
    """The percents of space and inodes used at which the storage-capacity-guard warns, as its
    entry in the automation catalogue says them ("... at 80% and 90% ..."): read there, kept
    nowhere else."""
    from tooling.catalogue.automations import by_id
    from tooling.catalogue.modes import CatalogueError

    guard = by_id(CAPACITY_AUTOMATION)
    found = re.search(r"\bat (\d{1,2})% and (\d{1,2})%", guard.automation if guard else "")
    if found is None:  # a bug of the package, found by its tests
        raise CatalogueError(f"the automation catalogue's {CAPACITY_AUTOMATION} names no thresholds 'at N% and M%'")
    return tuple(sorted(int(n) for n in found.groups()))


@dataclass(frozen=True)
class Fault:
    """One thing wrong with the node.

    An *event* (a kernel line) is counted once, when it is read; a *standing* fault (a counter,
    a full disk, a leftover segment) is there at every check until fixed: it is filed again only
    when its evidence changes (``standing`` names it, :attr:`lines` are the evidence).
    """
    mode: FailureMode
    evidence: str  # in a few words, for the drain reason: "Xid 79 GPU 3", "/ckpt 100% full"
    lines: tuple[str, ...]  # what the source said, the incident's signatures
    source: str  # what was read: a command line, or a stand-in file
    standing: str | None = None  # the standing fault's name; None: an event
    draft: Draft | None = field(default=None, compare=False)  # a kernel line's draft, from the scan
    occurrences: int = 1
    warning: bool = False  # a warning (a file system filling up): filed, but the node stays healthy, undrained


@dataclass(frozen=True)
class Filed:
    """What became of a fault: its incident and how."""
    incident: str | None  # None: nothing filed (no cluster to file under)
    action: str  # created | occurrence | known (a standing fault filed before, unchanged) | none
    occurrences: int = 0  # the incident's, in all
    path: Path | None = None


@dataclass(frozen=True)
class Probe:
    """How one probe ended: ``ok``, ``warn`` (healthy, with a warning to file), ``fault``,
    ``timeout``, ``error`` (it could not read its source) or ``skipped`` (nothing to check
    here), with what it read and a line of detail."""
    name: str
    status: str
    source: str
    detail: str
    faults: tuple[Fault, ...] = ()
    where: str | None = None  # the path a timeout or an error is located at
    seconds: float = 0.0
    file: str | None = None  # the file read, where the source is one (a stand-in)

    @property
    def healthy(self) -> bool:
        return self.status in ("ok", "skipped", "warn")
