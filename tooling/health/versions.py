"""What one node of a job runs, for ``tooling preflight``: the driver, CUDA, NCCL, torch, Python,
the code and the locked-memory limit, each with what it was read from.

Driver and CUDA come from nvidia-smi's header (``Driver Version``, ``CUDA Version``), the same
command the health check reads its counters with (:func:`tooling.health.probes.counters_source`):
the real one where it is installed, else an emulated node's stand-in, the only stand-in. NCCL comes
from the torch build where it has CUDA (``torch.cuda.nccl.version()``), else from the stand-in's
header (``NCCL Version``, a line of the emulation: real nvidia-smi has none), else it is "none".
An nvidia-smi that says a GPU is lost (the health check's :func:`tooling.health.gpus.failed_command`)
is a finding of the node's hardware; one that fails otherwise, or gives no answer in time, a
problem of the node named as such. The locked-memory limit is the task's own (``ulimit -l``): what
the network card may pin for RDMA, which SLURM passes from the submitting shell, or a node's slurmd
caps (network.locked-memory).
"""
from __future__ import annotations

import platform
import re
import resource
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tooling.programs import bounded, find

# each version a node reports, as messages name it
LABELS = {"driver": "driver", "cuda": "CUDA", "nccl": "NCCL", "torch": "torch", "python": "Python", "code": "code",
          "memlock": "locked-memory limit"}
NONE = "none"
UNLIMITED = "unlimited"
_HEADER = {"Driver Version": "driver", "CUDA Version": "cuda", "NCCL Version": "nccl"}
_LINE = re.compile(r"^(Driver Version|CUDA Version|NCCL Version)\s*:\s*(\S.*?)\s*$")


@dataclass(frozen=True)
class Value:
    value: str
    source: str  # what was read, as a person would rerun it
    where: str  # where a message about it is located: FILE:LINE:1 for a file read, else the node


@dataclass(frozen=True)
class Hardware:
    """A fault of the node's own hardware that reading its versions ran into."""
    mode: str  # the catalogue's failure mode
    evidence: str
    where: str


@dataclass(frozen=True)
class Report:
    """One node's versions, and what went wrong reading them."""
    node: str
    rank: int
    values: dict[str, Value]
    hardware: tuple[Hardware, ...] = ()
    problems: tuple[tuple[str, str], ...] = ()  # (where, what happened): a source that failed or gave no answer
    unread: tuple[str, ...] = ()  # the fields its failed source would have given: named already, not compared
    drained: str | None = None  # the drain reason given, where the node drained itself
    drain_error: str | None = None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> Report:
        return Report(data["node"], int(data["rank"]), {k: Value(**v) for k, v in data["values"].items()},
                      hardware=tuple(Hardware(**h) for h in data["hardware"]),
                      problems=tuple((w, t) for w, t in data["problems"]), unread=tuple(data["unread"]),
                      drained=data["drained"], drain_error=data["drain_error"])


def gather(node: str, rank: int, *, stand_ins: Path | None, code: Value, timeout: float) -> Report:
    """This node's report: nvidia-smi's header (or the stand-in's), torch's and Python's versions."""
    header, hardware, problems = gpu_header(node, stand_ins, timeout=timeout)
    values = {"driver": header.get("driver") or Value(NONE, "no nvidia-smi, no stand-in", node),
              "cuda": header.get("cuda") or Value(NONE, "no nvidia-smi, no stand-in", node),
              "nccl": _nccl(node, header.get("nccl")), "torch": _torch(node),
              "python": Value(platform.python_version(), sys.executable, node), "code": code,
              "memlock": memlock(node)}
    unread = tuple(f for f in ("driver", "cuda", "nccl") if values[f].value == NONE) if hardware or problems else ()
    return Report(node, rank, values, tuple(hardware), tuple(problems), unread=unread)


def gpu_header(node: str, stand_ins: Path | None, *,
                timeout: float) -> tuple[dict[str, Value], list[Hardware], list[tuple[str, str]]]:
    from tooling.health import gpus, probes  # the probes' modules: not for `tooling preflight --help`

    source = probes.counters_source(stand_ins)
    if source is None:
        return {}, [], []
    answer = bounded(source.argv, timeout=timeout, apart=True)
    if answer.status is None:
        return {}, [], [(source.where, f"{source.shown} gave no answer within {timeout:g} s (a hung GPU or driver?)")]
    found: dict[str, Value] = {}
    for number, line in enumerate(answer.output.splitlines(), 1):
        if (match := _LINE.match(line)) and _HEADER[match[1]] not in found:
            where = f"{source.file}:{number}:1" if source.file else node
            found[_HEADER[match[1]]] = Value(match[2], source.shown, where)
    if answer.status == 0 and "driver" in found:
        return found, [], []
    # no version read: what it said instead (a GPU lost is the node's hardware)
    said = answer.output + answer.errors
    lost = [Hardware(f.mode.id, f.evidence.rstrip(), _line_of(source.file, answer.output, f.lines[0]) or node)
            for f in gpus.failed_command(said, source.shown)]
    if lost:
        return found, lost, []
    last = said.strip().splitlines()[-1:] or ["no output"]
    status = f"exit {answer.status}" if answer.status else "no Driver Version line"
    return found, [], [(source.where, f"{source.shown}: {status}: {last[0][:120]}")]


def _line_of(file: str | None, text: str, line: str) -> str | None:
    """FILE:N:1 where ``line`` is the N-th of ``text`` read from ``file``; None: not a file."""
    if file is None:
        return None
    number = next((n for n, said in enumerate(text.splitlines(), 1) if said.strip() == line), 1)
    return f"{file}:{number}:1"


def _nccl(node: str, stand_in: Value | None) -> Value:
    """The torch build's NCCL where it has CUDA, else the stand-in's, else none."""
    import torch

    if torch.version.cuda and torch.distributed.is_available() and torch.distributed.is_nccl_available():
        found = torch.cuda.nccl.version()
        said = ".".join(map(str, found)) if isinstance(found, tuple) else str(found)
        return Value(said, "torch.cuda.nccl.version()", node)
    return stand_in or Value(NONE, "no CUDA in this torch, no NCCL Version in a stand-in", node)


def memlock(node: str) -> Value:
    """The locked-memory limit this task runs under, as ``ulimit -l`` says it: unlimited, or KiB."""
    soft = resource.getrlimit(resource.RLIMIT_MEMLOCK)[0]
    return Value(UNLIMITED if soft == resource.RLIM_INFINITY else kib(str(soft // 1024)), "ulimit -l", node)


def kib(number: str) -> str:
    """A locked-memory limit as reported and compared: ``ulimit -l``'s number with its unit."""
    return f"{number} KiB"


def _torch(node: str) -> Value:
    import torch

    return Value(str(torch.__version__), f"torch.__version__ ({Path(torch.__file__).parent})", node)


def code_version(folder: Path, *, node: str, given: str | None, timeout: float) -> Value:
    """--code-version's value, else the commit of the git working tree at ``folder`` (with
    ``-dirty`` where tracked files differ from it), else none."""
    if given is not None:
        return Value(given, "--code-version", node)
    git = find("git")
    if git is None:
        return Value(NONE, "no git", node)
    head = bounded([git, "-C", str(folder), "rev-parse", "HEAD"], timeout=timeout, apart=True)
    if head.status != 0:
        return Value(NONE, f"no git commit at {folder}", node)
    # `git diff --quiet` compares contents without writing the index (a job must not take its lock)
    dirty = bounded([git, "-C", str(folder), "diff", "--quiet", "HEAD", "--"], timeout=timeout)
    suffix = "-dirty" if dirty.status == 1 else "" if dirty.status == 0 else "-unknown"
    return Value(head.output.strip() + suffix, f"git rev-parse HEAD in {folder}", node)
