"""Where a job's pre-flight tasks meet (``tooling preflight``): ranks from SLURM's environment, a
key-value store at the first node, every wait bounded.

One srun task per node (``srun --ntasks-per-node=1``): rank ``SLURM_PROCID`` of
``SLURM_STEP_NUM_TASKS`` runs on the rank-th node of the step's node list (``scontrol show
hostnames``), so a rank that never reports is still named by its node. Rank 0 holds the store (a
torch TCPStore) at its node's address as SLURM knows it (``NodeAddr``: emulated nodes share
127.0.0.1 and have no host names) on a port of the job (:func:`job_port`). Outside SLURM the check
is of this node alone, a store in memory.
"""
from __future__ import annotations

import json
import re
import socket
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Mapping

from tooling.errors import UsageError
from tooling.programs import bounded, find

POLL = 0.05  # seconds between looks at the store
# Labs 6 and 7 take 20000 + ((cluster + job) * 16 + restart % 8) % 12000, the first 8 slots of the
# job's 16: the pre-flight before them takes slot 8, so that they never meet on one port. All below
# 32768, where Linux's ephemeral ports begin: any process's outgoing connection may hold one there
PORT_BASE, PORT_SPAN, SLOTS, SLOT = 20000, 12000, 16, 8


class Unreachable(Exception):
    """The store could not be reached (or, on rank 0, listened at) within the timeout."""


class HostLost(Exception):
    """The store stopped answering after it was reached: rank 0's task ended or its node went."""


@dataclass(frozen=True)
class Place:
    rank: int
    world: int
    node: str
    nodes: tuple[str, ...]  # the node of each rank
    host: str  # the store's address
    port: int  # 0: a store in memory (one rank)
    job: str | None

    @property
    def at(self) -> str:
        return f"{self.host}:{self.port} ({self.nodes[0]}, rank 0)"


def job_port(job: int, restart: int) -> int:
    return PORT_BASE + (job * SLOTS + SLOT + restart % SLOT) % PORT_SPAN


def place(env: Mapping[str, str], *, node: str | None, port: int | None, timeout: float) -> Place:
    """This task's place in the job, from SLURM's environment; outside a job, a job of one."""
    here = node or env.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
    if "SLURM_JOB_ID" not in env:
        return Place(0, 1, here, (here,), "127.0.0.1", 0, None)
    if "SLURM_STEP_ID" not in env:
        raise UsageError("SLURM_STEP_ID is not set: this is the batch script itself, one task on one node; expected "
                         "one srun task per node: srun --ntasks-per-node=1 tooling preflight ...")
    tasks, nodes = _number(env, "SLURM_STEP_NUM_TASKS"), _number(env, "SLURM_STEP_NUM_NODES")
    if tasks != nodes:
        raise UsageError(f"the step has {tasks} tasks on {nodes} nodes; expected one task per node: "
                         "srun --ntasks-per-node=1 tooling preflight ...")
    names = tuple(_scontrol(["show", "hostnames", env.get("SLURM_STEP_NODELIST") or env["SLURM_JOB_NODELIST"]],
                            timeout=timeout).split())
    rank = _number(env, "SLURM_PROCID")
    if len(names) != nodes or not 0 <= rank < nodes:
        raise UsageError(f"rank {rank} of {nodes} tasks on nodes {', '.join(names)}; expected SLURM's own environment")
    shown = _scontrol(["show", "node", names[0]], timeout=timeout)
    addr = next((f.split("=", 1)[1] for f in shown.split() if f.startswith("NodeAddr=")), names[0])
    job = _number(env, "SLURM_JOB_ID")
    chosen = port if port is not None else job_port(job, int(env.get("SLURM_RESTART_COUNT") or 0))
    return Place(rank, nodes, node or env.get("SLURMD_NODENAME") or names[rank], names, addr, chosen, str(job))


def _number(env: Mapping[str, str], name: str) -> int:
    said = env.get(name, "")
    if not said.isdigit():
        raise UsageError(f"{name}={said!r}; expected a whole number, as srun sets it")
    return int(said)


def _scontrol(args: list[str], *, timeout: float) -> str:
    program = find("scontrol")
    if program is None:
        raise UsageError("scontrol not found; expected SLURM's commands on PATH in a job")
    answer = bounded([program, *args], timeout=timeout, apart=True)
    if answer.status != 0:
        said = f"no answer within {timeout:g} s" if answer.status is None else answer.errors.strip()
        raise UsageError(f"scontrol {' '.join(args)}: {said}; expected it to answer in a job")
    return answer.output


class Exchange:
    """The store of the job's tasks: each posts what it has under ``KIND/RANK``; each collects."""

    def __init__(self, where: Place, *, timeout: float) -> None:
        from torch import distributed

        self.place = where
        if where.world == 1:
            self.store: Any = distributed.HashStore()
            return
        try:  # rank 0 listens; the others try to connect until the timeout
            self.store = distributed.TCPStore(where.host, where.port, where.world, where.rank == 0,
                                              timedelta(seconds=timeout), wait_for_workers=False)
        except (RuntimeError, OSError) as exc:
            raise Unreachable(gist(exc)) from None

    def post(self, kind: str, value: Mapping[str, Any]) -> None:
        self._guarded(lambda: self.store.set(f"{kind}/{self.place.rank}", json.dumps(value)))

    def collect(self, kind: str, *, seconds: float, ranks: range | list[int] | None = None) -> dict[int, Any]:
        """What each rank posted under ``kind`` within ``seconds``; a rank missing is left out."""
        wanted = list(range(self.place.world) if ranks is None else ranks)
        found: dict[int, Any] = {}
        deadline = time.monotonic() + seconds
        while True:
            for rank in [r for r in wanted if r not in found]:
                key = f"{kind}/{rank}"
                if self._guarded(lambda: self.store.check([key])):
                    found[rank] = json.loads(self._guarded(lambda: self.store.get(key)))
            if len(found) == len(wanted) or time.monotonic() >= deadline:
                return found
            time.sleep(POLL)

    def _guarded(self, action: Any) -> Any:
        try:
            return action()
        except (RuntimeError, OSError) as exc:
            raise HostLost(gist(exc)) from None


def gist(exc: BaseException) -> str:
    """The first line of a c10d error, without its C++ frames."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip() and not line.startswith(("Exception raised",
                                                                                                         "frame #"))]
    first = re.sub(r"^\[enforce fail at [^\]]*\] ", "", lines[0]) if lines else type(exc).__name__  # gloo's
    return first.rstrip(".")[:160]
