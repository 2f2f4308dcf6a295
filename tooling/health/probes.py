"""The probes of the node health check, cheapest first, each with its source and its own timeout.

A source is the real command, or on an emulated node (``--stand-ins DIR``, scripts/slurm-cluster)
a file that stands in for it; there are two, and only two: ``DIR/nvidia-smi`` for
``nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER`` where nvidia-smi is not installed, and
``DIR/dmesg`` for ``dmesg`` (one kernel serves every emulated node). What each probe read is
in its :attr:`~tooling.health.faults.Probe.source`. Files and file systems are read by a process of
their own (``cat``, ``stat -f``; :func:`tooling.programs.bounded`), killed at the timeout: a
stand-in that is a FIFO, or a path on a dead NFS mount, ends the probe with ``timeout``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from tooling.health import gpus, host
from tooling.health.faults import Probe
from tooling.programs import Answer, bounded, find


KERNEL = "kernel log"


@dataclass(frozen=True)
class Source:
    argv: list[str]
    shown: str  # what the report says was read
    where: str  # where a timeout or an error is located
    file: str | None = None  # the file it reads, for a stand-in


def _command(argv: list[str]) -> Source | None:
    program = find(argv[0])
    return None if program is None else Source([program, *argv[1:]], " ".join(argv), program)


def _stand_in(folder: Path, name: str, replaces: list[str]) -> Source:
    path = str(folder / name)
    return Source(["cat", "--", path], f"{path} (stand-in for {' '.join(replaces)})", path, path)


def counters_source(stand_ins: Path | None) -> Source | None:
    """Real nvidia-smi where it is installed, else the stand-in, else none."""
    real = _command(gpus.COUNTERS)
    return real if real is not None or stand_ins is None else _stand_in(stand_ins, "nvidia-smi", gpus.COUNTERS)


def kernel_source(stand_ins: Path | None) -> Source | None:
    """The stand-in where there is one (the emulated nodes share this kernel), else dmesg."""
    return _stand_in(stand_ins, "dmesg", ["dmesg"]) if stand_ins is not None else _command(["dmesg"])


def _ended(name: str, source: Source, answer: Answer, timeout: float, started: float) -> Probe | None:
    """The probe's end when its source gave no answer in time, or failed; None: it answered."""
    seconds = time.monotonic() - started
    if answer.status is None:
        return Probe(name, "timeout", source.shown, f"no answer within {timeout:g} s (a FIFO, a hung mount or "
                     "device?)", where=source.where, seconds=seconds)
    if answer.status != 0:
        said = (answer.errors or answer.output).strip().splitlines()
        return Probe(name, "error", source.shown, f"exit {answer.status}: {said[-1] if said else 'no output'}",
                     where=source.where, seconds=seconds)
    return None


def gpu_counters(stand_ins: Path | None, *, timeout: float) -> tuple[Probe, list[gpus.Gpu]]:
    name, started = "gpu counters", time.monotonic()
    source = counters_source(stand_ins)
    if source is None:
        return Probe(name, "skipped", "nvidia-smi", "not installed: no GPU here"), []
    answer = bounded(source.argv, timeout=timeout, apart=True)
    if answer.status not in (None, 0) and (faults := gpus.failed_command(answer.output + answer.errors, source.shown)):
        return Probe(name, "fault", source.shown, faults[0].evidence, tuple(faults),
                     seconds=time.monotonic() - started), []
    if (ended := _ended(name, source, answer, timeout, started)) is not None:
        return ended, []
    found, faults = gpus.read_counters(answer.output, source.shown)
    detail = f"{len(found)} GPU{'s' if len(found) != 1 else ''}: " + (
        "; ".join(f.evidence for f in faults) if faults else "no uncorrectable error, no retirement or remapping "
                                                             "pending or failed")
    return Probe(name, "fault" if faults else "ok", source.shown, detail, tuple(faults),
                 seconds=time.monotonic() - started), found


def kernel_log(stand_ins: Path | None, *, timeout: float) -> tuple[Probe, list[str]]:
    """The kernel's lines, all of them: which are new is for the check to say (its state)."""
    name, started = KERNEL, time.monotonic()
    source = kernel_source(stand_ins)
    if source is None:
        return Probe(name, "skipped", "dmesg", "not installed"), []
    answer = bounded(source.argv, timeout=timeout, apart=True)
    if (ended := _ended(name, source, answer, timeout, started)) is not None:
        return ended, []
    lines = answer.output.splitlines()
    return Probe(name, "ok", source.shown, f"{len(lines)} lines", seconds=time.monotonic() - started,
                 file=source.file), lines


def file_systems(paths: list[Path], *, min_free: float, thresholds: tuple[int, ...], timeout: float) -> list[Probe]:
    """One probe per checkpoint or log folder, each with its own timeout: a fault under
    ``min_free`` percent free, else a warning at the highest of ``thresholds`` (percent used) crossed."""
    probes = []
    for path in paths:
        name, started = f"room {path}", time.monotonic()
        source = Source([*host.STATFS, str(path)], f"stat -f {path}", str(path))
        answer = bounded(source.argv, timeout=timeout, apart=True)
        if (ended := _ended(name, source, answer, timeout, started)) is not None:
            probes.append(ended)
            continue
        room = host.read_room(str(path), answer.output)
        if room is None:
            probes.append(Probe(name, "error", source.shown, f"unexpected answer {answer.output.strip()!r}",
                                where=source.where, seconds=time.monotonic() - started))
            continue
        faults = host.room_faults(room, min_free=min_free, source=source.shown)
        warnings = host.room_warnings(room, thresholds=thresholds, faults=faults, source=source.shown)
        status = "fault" if faults else "warn" if warnings else "ok"
        probes.append(Probe(name, status, source.shown, room.summary().partition(": ")[2], (*faults, *warnings),
                            seconds=time.monotonic() - started))
    return probes


def shared_memory(folder: Path, *, grace: float, timeout: float) -> Probe:
    name, started = "shared memory", time.monotonic()
    shown = f"{folder} and /proc/*/maps, /proc/*/fd"
    try:
        old = host.old_segments(folder, grace=grace)
        stale = [] if not old else \
            [s for s in old if s.path not in host.held({s.path for s in old}, deadline=started + timeout)]
    except TimeoutError:
        return Probe(name, "timeout", shown, f"no answer within {timeout:g} s", where="/proc",
                     seconds=time.monotonic() - started)
    except OSError as exc:
        return Probe(name, "error", shown, f"{exc.strerror}", where=str(folder), seconds=time.monotonic() - started)
    if not stale:
        return Probe(name, "ok", shown, f"no segment left unheld for {grace:g} s", seconds=time.monotonic() - started)
    fault = host.stale_fault(stale, folder=folder, source=shown)
    return Probe(name, "fault", shown, fault.evidence, (fault,), seconds=time.monotonic() - started)


def gpu_processes(*, timeout: float) -> Probe:
    """Processes that hold a GPU outside every running job (real nvidia-smi only: no stand-in)."""
    name, started = "gpu processes", time.monotonic()
    source = _command(gpus.APPS)
    if source is None:
        return Probe(name, "skipped", "nvidia-smi", "not installed: no GPU here")
    answer = bounded(source.argv, timeout=timeout, apart=True)
    if (ended := _ended(name, source, answer, timeout, started)) is not None:
        return ended
    holders = gpus.read_holders(answer.output)
    left = [h for h in holders if not host.in_a_job(h.pid)]
    if not left:
        return Probe(name, "ok", source.shown, f"{len(holders)} in jobs, none outside",
                     seconds=time.monotonic() - started)
    fault = gpus.leftover_fault(left, source.shown)
    return Probe(name, "fault", source.shown, fault.evidence, (fault,), seconds=time.monotonic() - started)
