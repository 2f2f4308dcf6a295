"""The GPUs' own counters, as ``nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER`` prints them,
and the processes that hold a GPU (``nvidia-smi --query-compute-apps``).

A counter is a fault when the driver says the GPU's memory can no longer be trusted until it is
reset or swapped: an uncorrectable error since the driver loaded (``Volatile``; ``Aggregate`` is
the GPU's whole life, and a row remapped long ago is a healed GPU), a page retirement or a row
remapping still pending (it takes effect at the next reset), a remapping that failed. The line
that says so is read through the catalogue's recognisers for its failure mode (``DRAM
Uncorrectable: 2`` is gpu.hbm-ecc, ``SRAM Uncorrectable Parity: 1`` gpu.sram-ecc); a pending
retirement or remapping, which no log line words, is gpu.hbm-ecc, whose summary names it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tooling.health.faults import DRAIN_AUTOMATION, Fault, mode

COUNTERS = ["nvidia-smi", "-q", "-d", "ECC,PAGE_RETIREMENT,ROW_REMAPPER"]
APPS = ["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader,nounits"]
PENDING_MODE = "gpu.hbm-ecc"  # a retirement or remapping pending or failed (see the module's docstring)
LEFTOVER_MODE = "process.stuck-after-crash"  # a process that outlived its job, holding its GPU

_GPU = re.compile(r"^GPU ([0-9A-Fa-f]{4,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.[0-9A-Fa-f]\s*$")
_FIELD = re.compile(r"^(\S.*?)\s*:\s*(.*?)\s*$")
# the bus of a kernel line's GPU: "NVRM: Xid (PCI:0000:3b:00): 79, ..."
_XID_BUS = re.compile(r"PCI:([0-9A-Fa-f]{4,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class Gpu:
    index: int  # as nvidia-smi and CUDA number them: the order of the report
    bus: str  # "00000000:18:00.0"
    at: tuple[int, int, int]  # domain, bus, device


def read_counters(text: str, source: str) -> tuple[list[Gpu], list[Fault]]:
    """The GPUs of the report and the faults its counters show."""
    gpus: list[Gpu] = []
    faults: list[Fault] = []
    headers: list[tuple[int, str]] = []  # the sections a line is in, with their indents
    for raw in text.splitlines():
        if found := _GPU.match(raw):
            gpus.append(Gpu(len(gpus), raw[4:].strip(), (int(found[1], 16), int(found[2], 16), int(found[3], 16))))
            headers = []
            continue
        if not gpus or not raw.strip():
            continue
        indent = len(raw) - len(raw.lstrip())
        while headers and headers[-1][0] >= indent:
            headers.pop()
        field = _FIELD.match(raw.strip())
        if field is None or not field[2]:
            headers.append((indent, raw.strip()))
            continue
        section = [h for _, h in headers]
        if _bad(section, field[1], field[2]):
            faults.append(_fault(gpus[-1], section, field[1], field[2], source))
    return gpus, faults


def _bad(section: list[str], name: str, value: str) -> bool:
    top = section[0] if section else ""
    if top == "ECC Errors":
        uncorrectable = "Uncorrectable" in name or ("Double Bit" in section and name == "Total")  # before Ampere
        return "Volatile" in section and uncorrectable and value.isdigit() and int(value) > 0
    if top == "Retired Pages":
        return name.startswith("Pending") and value == "Yes"
    if top == "Remapped Rows":
        return name in ("Pending", "Remapping Failure Occurred") and value == "Yes"
    return False


def _fault(gpu: Gpu, section: list[str], name: str, value: str, source: str) -> Fault:
    from tooling.catalogue.recognise import recogniser  # only for a fault: healthy counters need none of it

    named = recogniser().line(f"{name}: {value}").mode
    said = f"{name} {value}" if value.isdigit() else f"{section[0]} {name}" if name == "Pending" else name
    return Fault(named or mode(PENDING_MODE), f"GPU {gpu.index} {said}",
                 (f"GPU {gpu.bus}: {' > '.join(section)} > {name}: {value}",), source,
                 standing=f"gpu {gpu.bus} {'/'.join([*section, name])}")


def failed_command(output: str, source: str) -> list[Fault]:
    """nvidia-smi that could not read the GPUs says why: "Unable to determine the device handle
    for GPU 0000:3B:00.0: GPU is lost" is a GPU that fell off the bus. The lines the catalogue
    names a node's fault (as :mod:`tooling.health.kernel` reads the kernel's)."""
    from tooling.catalogue.recognise import recogniser

    faults = []
    for line in (line.strip() for line in output.splitlines()):
        named = recogniser().line(line).mode if line else None
        if named is not None and named.automation == DRAIN_AUTOMATION:
            faults.append(Fault(named, f"nvidia-smi: {line[:80]}", (line,), source, standing=f"nvidia-smi {named.id}"))
    return faults


def gpu_of(line: str, gpus: list[Gpu]) -> str | None:
    """Which GPU a kernel line names by its PCI bus: "GPU 3", else the bus as written; None: none."""
    found = _XID_BUS.search(line)
    if found is None:
        return None
    at = (int(found[1], 16), int(found[2], 16), int(found[3], 16))
    return next((f"GPU {g.index}" for g in gpus if g.at == at), found[0])


@dataclass(frozen=True)
class Holder:
    pid: int
    name: str
    memory: str  # MiB, as nvidia-smi gives it


def read_holders(text: str) -> list[Holder]:
    """The processes of ``nvidia-smi --query-compute-apps=pid,process_name,used_memory``'s CSV."""
    holders = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3 and parts[0].isdigit():
            holders.append(Holder(int(parts[0]), parts[1], parts[2]))
    return holders


def leftover_fault(holders: list[Holder], source: str) -> Fault:
    """Processes outside every job that still hold a GPU: the next job finds its memory taken."""
    shown = ", ".join(f"pid {h.pid} ({h.name})" for h in holders[:3]) + (" and more" if len(holders) > 3 else "")
    return Fault(mode(LEFTOVER_MODE), f"GPU held by {shown}",
                 tuple(f"pid {h.pid} ({h.name}) holds {h.memory} MiB of GPU memory outside any job" for h in holders),
                 source, standing="gpu processes")
