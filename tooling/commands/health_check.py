"""`tooling health-check`: the node health check, as SLURM runs a Prolog or a HealthCheckProgram.

The cheap checks of the diagnostic ladders, cheapest first, each with its own timeout: the GPUs'
ECC counters, retired pages and remapped rows; the kernel's lines since the last check, read
through the failure-mode catalogue (Xid 79, 48, 63, 64, machine checks); free space and inodes of
the checkpoint and log file systems (--path); shared-memory segments no process holds; processes
holding a GPU outside every job. Healthy: exit 0, nothing written. A --path whose space or inodes
are used at or above the storage-capacity-guard's thresholds (the automation catalogue's, 80% and
90%) is a warning: healthy, not drained, but filed with --cluster (again only once it crosses the
next). --prune-keep N first prunes each --path that is a checkpoint folder no job writes now
(tooling.resilience.retention). A fault: exit 1, after filing
the incident (--cluster; or an occurrence more of the node's open one for the same failure) and
draining the node (--drain) with a reason that names the failure mode, the evidence and the
incident. A probe that gets no answer in time (a dead NFS mount, a FIFO) ends in one located
line and counts as unhealthy. scripts/slurm/health-check runs it from slurmd (README.md, "Node
health check").

Output: a line for the node, then a line per probe saying what it read (the real command, or an
emulated node's stand-in file), or with --json one object: ``{"node", "healthy", "seconds",
"reason", "drained", "drain_error", "probes": [{"name", "status", "source", "detail", "seconds"}],
"faults": [{"failure_mode", "evidence", "warning", "lines", "source", "incident", "action", "occurrences"}],
"others": [failure modes the kernel reported that are not the node's], "pruned": [{"path", "removed", "kept",
"freed", "error"}]}``.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooling import arguments
from tooling.errors import UsageError
from tooling.now import Clock
from tooling.records.findings import shown_path

if TYPE_CHECKING:
    from tooling.health.check import Report

NAME = "health-check"
HELP = ("check this node (GPU counters, kernel lines, free space and inodes, /dev/shm, GPU processes); "
        "on a fault drain it and file the incident")
TIMEOUT, GRACE, MIN_FREE = 5.0, 60.0, 5.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--node", help="the node's SLURM name (default: $SLURMD_NODENAME, else the short host name)")
    parser.add_argument("--path", action="append", dest="paths", type=Path, default=[], metavar="DIR",
                        help="a checkpoint or log folder whose file system must have room (repeatable)")
    parser.add_argument("--min-free", type=arguments.percent, default=MIN_FREE, metavar="PERCENT",
                        help="least free space, and free inodes, of each --path (default: %(default)g); above it, "
                             "a warning (filed, not drained) at the storage-capacity-guard's thresholds of use")
    parser.add_argument("--prune-keep", type=_keep, metavar="N",
                        help="first prune each --path that is a checkpoint folder no job writes now to its newest N "
                             "checkpoints (at least 2; the newest two that verify are always kept)")
    parser.add_argument("--shm", type=Path, default=Path("/dev/shm"), metavar="DIR",
                        help="the shared-memory folder (default: %(default)s)")
    parser.add_argument("--shm-grace", type=arguments.non_negative, default=GRACE, metavar="SECONDS",
                        help="a segment no process holds is stale once unwritten this long (default: %(default)g)")
    parser.add_argument("--stand-ins", type=Path, metavar="DIR",
                        help="an emulated node's stand-ins (scripts/slurm-cluster): DIR/dmesg read for dmesg, "
                             "DIR/nvidia-smi for nvidia-smi -q where nvidia-smi is not installed")
    parser.add_argument("--timeout", type=arguments.seconds, default=TIMEOUT, metavar="SECONDS",
                        help="seconds per probe (default: %(default)g)")
    parser.add_argument("--state", type=Path, metavar="FILE", help="what the node's checks remember "
                        "(default: $XDG_STATE_HOME/tooling/health/NODE.json)")
    parser.add_argument("--cluster", metavar="NAME",
                        help="file each fault as an incident of scope cluster under NAME (default: file nothing)")
    parser.add_argument("--drain", action="store_true", help="on a fault, drain the node in SLURM (scontrol)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    from tooling.commands.scan import placement
    from tooling.health.check import Settings, check
    from tooling.health.state import default_path

    node = args.node or os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
    if args.cluster is not None:
        placement(root, run=None, cluster=args.cluster)  # a bad name refused before anything runs
    if args.stand_ins is not None and not args.stand_ins.is_dir():
        raise UsageError(f"--stand-ins {args.stand_ins}: no such folder; expected an emulated node's folder of "
                         "stand-ins (scripts/slurm-cluster makes $SLURM_CLUSTER_DIR/faults/NODE)")
    settings = Settings(node=node, stand_ins=args.stand_ins, paths=tuple(args.paths), shm=args.shm,
                        shm_grace=args.shm_grace, min_free=args.min_free, timeout=args.timeout,
                        state=args.state or default_path(node), cluster=args.cluster, drain=args.drain)
    pruned = _prune(args.paths, args.prune_keep) if args.prune_keep else []
    report = check(settings, root=root, now=clock())
    _located(report, args.timeout)
    print(json.dumps({**_as_json(report, root), "pruned": pruned}, ensure_ascii=False) if args.json else
          "\n".join(_lines(report, root) + [_pruned_line(p) for p in pruned]), flush=True)
    return 0 if report.healthy else 1


def _keep(text: str) -> int:
    if not text.isdigit() or int(text) < 2:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 2 (the newest may be torn) but received: "
                                         f"{text!r}")
    return int(text)


def _prune(paths: list[Path], keep: int) -> list[dict[str, Any]]:
    """Prune each checkpoint folder among ``paths`` (tooling.resilience.retention); what became of each."""
    from tooling.resilience.retention import is_checkpoint_folder, prune

    done: list[dict[str, Any]] = []
    for path in paths:
        if not is_checkpoint_folder(path):
            continue
        try:
            result = prune(path, keep=keep)
        except (ValueError, OSError) as exc:  # a job writing there is the usual reason: a note, not a fault
            done.append({"path": str(path), "removed": [], "kept": None, "freed": 0, "error": str(exc)})
            continue
        done.append({"path": str(path), "removed": list(result.removed), "kept": list(result.kept),
                     "freed": result.freed, "error": None})
    return done


def _pruned_line(pruned: dict[str, Any]) -> str:
    from tooling.health.host import size

    kept = ", ".join(map(str, pruned["kept"] or []))
    if pruned["error"]:
        return f"not pruned {pruned['path']}: {pruned['error']}"
    if not pruned["removed"]:
        return f"nothing to prune in {pruned['path']}: kept steps {kept}"
    return (f"pruned {pruned['path']}: steps {', '.join(map(str, pruned['removed']))} ({size(pruned['freed'])}); "
            f"kept steps {kept}")


def _located(report: Report, timeout: float) -> None:
    """A probe that could not answer, or a drain that failed, in the house's one located line."""
    for probe in report.probes:
        if probe.status == "timeout":
            print(f"tooling: error: {probe.where}:1:1: [probe-timeout] the {probe.name} probe got no answer within "
                  f"{timeout:g} s (a FIFO, a hung mount or device?); expected its source to answer at once",
                  file=sys.stderr)
        elif probe.status == "error":
            print(f"tooling: error: {probe.where}:1:1: [probe-failed] the {probe.name} probe could not read "
                  f"{probe.source}: {probe.detail}; expected it readable", file=sys.stderr)
    if report.unfiled:
        print(f"tooling: error: {report.unfiled}", file=sys.stderr)
    if report.drain_error:
        print(f"tooling: error: drain {report.node}: {report.drain_error}", file=sys.stderr)


def _shown(path: Path | None, root: Path) -> str:
    return "" if path is None else shown_path(path, root)


def _lines(report: Report, root: Path) -> list[str]:
    count = f"{len(report.probes)} probes in {report.seconds:.2f} s"
    warnings = [f"{f.mode.id} {f.evidence}" for f in report.faults if f.warning]
    if report.healthy:
        head = f"{report.node}: healthy ({count})" + (f", warning: {'; '.join(warnings)}" if warnings else "")
    else:
        done = "drained" if report.drained else "not drained"
        head = f"{report.node}: unhealthy, {done} ({count}): {report.reason}"
    lines = [head] + [f"  {p.name:<16} {p.status:<8} {p.source}: {p.detail}" for p in report.probes]
    for fault, filed in zip(report.faults, report.filed):
        if filed.action == "created":
            lines.append(f"created {_shown(filed.path, root)}: {fault.mode.id} {fault.evidence}")
        elif filed.action == "occurrence":
            lines.append(f"updated {_shown(filed.path, root)}: {filed.occurrences} occurrences: "
                         f"{fault.mode.id} {fault.evidence}")
        elif filed.action == "known":
            lines.append(f"known {filed.incident}: {fault.mode.id} {fault.evidence} (filed before, unchanged)")
    return lines


def _as_json(report: Report, root: Path) -> dict[str, Any]:
    return {
        "node": report.node, "healthy": report.healthy, "seconds": round(report.seconds, 3), "reason": report.reason,
        "drained": report.drained, "drain_error": report.drain_error,
        "probes": [{"name": p.name, "status": p.status, "source": p.source, "detail": p.detail,
                    "seconds": round(p.seconds, 3)} for p in report.probes],
        "faults": [{"failure_mode": f.mode.id, "evidence": f.evidence, "warning": f.warning, "lines": list(f.lines),
                    "source": f.source,
                    "incident": filed.incident, "action": filed.action, "occurrences": filed.occurrences,
                    "path": _shown(filed.path, root) or None} for f, filed in zip(report.faults, report.filed)],
        "others": [d.mode.id for d in report.others],
    }
