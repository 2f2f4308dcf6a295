"""One health check of one node: the probes cheapest first, then, on a fault, the incident filed
(or an occurrence added to the node's open one for the same failure) and the node drained.

SLURM's conventions for a Prolog and a HealthCheckProgram: healthy is exit 0 and nothing
written; a fault (or a probe that could not answer) is exit 1, after the check drained the node
itself (``scontrol update nodename=n2 state=drain reason="gpu.fell-off-bus Xid 79 GPU 3,
INC-0042"``: the failure mode, the evidence, the incident), as a HealthCheckProgram must; a
Prolog's non-zero exit also requeues the job. Every probe has its own timeout, so the whole
check is bounded. Filing is ``tooling watch``'s (:func:`tooling.watch.occurrences.file_found`),
per node: one incident per node and failure, an occurrence more each time it comes back.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tooling.errors import UserError
from tooling.health import kernel, probes, state
from tooling.health.faults import Fault, Filed, Probe, capacity_thresholds
from tooling.health.gpus import Gpu
from tooling.health.reason import SEPARATOR, entry
from tooling.programs import bounded, find

if TYPE_CHECKING:
    from tooling.logs.drafts import Draft

MAX_REASON = 250  # characters of a drain reason: sinfo -R and scontrol show node keep it whole
BY = "tooling health-check"


@dataclass(frozen=True)
class Settings:
    node: str
    stand_ins: Path | None  # the node's stand-in folder (an emulated node)
    paths: tuple[Path, ...]  # checkpoint and log folders
    shm: Path
    shm_grace: float  # seconds a segment may sit unheld
    min_free: float  # percent of space and of inodes
    timeout: float  # seconds per probe
    state: Path
    cluster: str | None  # file incidents under this cluster (None: file nothing)
    drain: bool


@dataclass(frozen=True)
class Report:
    node: str
    probes: list[Probe]
    faults: list[Fault]
    filed: list[Filed]  # one per fault
    others: list[Draft]  # failures in the kernel's lines that are not the node's
    reason: str | None  # the drain reason (None: healthy)
    drained: bool
    drain_error: str | None
    seconds: float
    unfiled: str | None = None  # why the faults could not be filed

    @property
    def healthy(self) -> bool:
        return all(p.healthy for p in self.probes)


def run_probes(s: Settings) -> tuple[list[Probe], list[str], list[Gpu]]:
    """Every probe, cheapest first; the kernel's lines and the GPUs with them (the kernel's faults
    wait for the state: which lines are new)."""
    counters, gpus = probes.gpu_counters(s.stand_ins, timeout=s.timeout)
    log, lines = probes.kernel_log(s.stand_ins, timeout=s.timeout)
    thresholds = capacity_thresholds() if s.paths else ()  # the catalogue: read only when there is a path
    rooms = probes.file_systems(list(s.paths), min_free=s.min_free, thresholds=thresholds, timeout=s.timeout)
    shm = probes.shared_memory(s.shm, grace=s.shm_grace, timeout=s.timeout)
    held = probes.gpu_processes(timeout=s.timeout)
    return [counters, log, *rooms, shm, held], lines, gpus


def check(s: Settings, *, root: Path, now: datetime) -> Report:
    started = time.monotonic()
    found, lines, gpus = run_probes(s)
    known = state.load(s.state, s.node)
    looked, others = _with_kernel(found, lines, gpus, known, now=now)
    to_file = any(not f.warning or s.cluster for p in looked for f in p.faults)  # a warning is only filed
    if not (s.cluster or s.drain) or (all(p.healthy for p in looked) and not to_file and not known.standing):
        faults = [f for p in looked for f in p.faults]  # nothing to act on, or nothing to do: nothing written
        return Report(s.node, looked, faults, [Filed(None, "none")] * len(faults), others,
                      _reason(looked, faults, []), False, None, time.monotonic() - started)
    with state.held(s.state, timeout=s.timeout):
        known = state.load(s.state, s.node)  # another check of the node may have acted meanwhile
        looked, others = _with_kernel(found, lines, gpus, known, now=now)
        report = _act(s, looked, others, known, root=root, now=now)
        _remember(known, lines, report.faults, report.filed)
        state.save(s.state, known)
    return replace(report, seconds=time.monotonic() - started)


def _act(s: Settings, looked: list[Probe], others: list[Draft], known: state.NodeState, *, root: Path,
         now: datetime) -> Report:
    """File the faults (with a cluster to file under) and drain the node (when asked)."""
    from tooling.health.filing import file_faults  # the records' machinery: only a check that acts loads it

    faults = [f for p in looked for f in p.faults]
    filed, unfiled = [Filed(None, "none")] * len(faults), None
    try:
        if s.cluster:
            filed = file_faults(faults, known, node=s.node, cluster=s.cluster, root=root, now=now, drain=s.drain)
    except UserError as exc:  # drained all the same: an unwritable record is no reason to run jobs there
        unfiled = str(exc)
    reason = _reason(looked, faults, filed)
    error = drain(s.node, reason, timeout=s.timeout) if s.drain and reason else None
    return Report(s.node, looked, faults, filed, others, reason, bool(s.drain and reason and not error), error,
                  0.0, unfiled)


def _with_kernel(found: list[Probe], lines: list[str], gpus: list[Gpu], known: state.NodeState, *,
                 now: datetime) -> tuple[list[Probe], list[Draft]]:
    """The probes with the kernel's faults: those of its lines since the last check that acted."""
    at = next(i for i, p in enumerate(found) if p.name == probes.KERNEL)
    log = found[at]
    if log.status != "ok":
        return found, []
    new = kernel.after(lines, known.kernel)
    drafts = kernel.drafts(new, name=log.file or "dmesg", now=now)
    faults, others = kernel.faults(drafts, source=log.source, gpus=gpus)
    detail = f"{len(lines)} lines, {len(new)} since the last check that acted" + (
        f"; {'; '.join(f.evidence for f in faults)}" if faults else "") + (
        f"; also {', '.join(d.mode.id for d in others)} (not the node's)" if others else "")
    return [*found[:at], replace(log, status="fault" if faults else "ok", detail=detail, faults=tuple(faults)),
            *found[at + 1:]], others


def _reason(looked: list[Probe], faults: list[Fault], filed: list[Filed]) -> str | None:
    """"MODE EVIDENCE, INC-NNNN" per failure, then the probes that could not answer; None: healthy."""
    failures: dict[tuple[str, str | None], list[str]] = {}
    for index, fault in enumerate(faults):
        if fault.warning:  # filed, but no reason to drain the node
            continue
        incident = filed[index].incident if index < len(filed) else None
        failures.setdefault((fault.mode.id, incident), []).append(fault.evidence)
    said = [entry(mode_id, " + ".join(evidence), incident) for (mode_id, incident), evidence in failures.items()]
    said += [f"health-check {p.name}: {p.status}" for p in looked if p.status in ("timeout", "error")]
    if not said:
        return None
    text = SEPARATOR.join(said)
    return text if len(text) <= MAX_REASON else text[:MAX_REASON - 1] + "…"


def drain(node: str, reason: str, *, timeout: float) -> str | None:
    """Drain the node in SLURM (the health check, and tooling preflight for a hardware fault); what went
    wrong, or None."""
    program = find("scontrol")
    if program is None:
        return "scontrol not found: the node is not drained"
    answer = bounded([program, "update", f"nodename={node}", "state=drain", f"reason={reason}"], timeout=timeout)
    if answer.status is None:
        return f"scontrol gave no answer within {timeout:g} s: the node may not be drained"
    if answer.status != 0:
        return f"scontrol exit {answer.status}: {answer.output.strip()}"
    return None


def _remember(known: state.NodeState, lines: list[str], faults: list[Fault], filed: list[Filed]) -> None:
    """The state after acting: the kernel read to its last line, the standing faults with their incidents."""
    if lines:
        known.kernel = kernel.end_of(lines)
    known.standing = {f.standing: {"lines": list(f.lines), "incident": filed[i].incident}
                      for i, f in enumerate(faults) if f.standing is not None}
    if any(f.action in ("created", "occurrence") for f in filed):
        known.polls += 1
