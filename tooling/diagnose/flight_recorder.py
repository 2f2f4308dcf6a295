"""PyTorch's collective flight recorder, read from a live rank and compared across ranks.

With ``TORCH_FR_BUFFER_SIZE=N`` set before ``init_process_group``, torch (2.13, gloo included,
not only NCCL) keeps the last N collectives each rank issued, with a sequence number per process
group, and ``pg_status`` says the last one each rank enqueued and completed. A rank that never
arrived at a collective has enqueued fewer than the others: that names the hung rank even when
its Python stack says nothing (stuck in C++ or CUDA). The trace is served by torch's worker
server (``_WorkerServer``, started per rank by :class:`tooling.resilience.Watchdog`) at
``POST /handler/fr_trace_json`` on a Unix socket, from a C++ thread that needs no GIL.
"""
from __future__ import annotations

import http.client
import json
import socket
from typing import Any

FETCH_TIMEOUT = 10.0  # seconds per rank; the answer comes in milliseconds


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.socket_path)
        self.sock = sock


def fetch(socket_path: str, *, timeout: float = FETCH_TIMEOUT) -> bytes:
    """One rank's flight recorder as torch serves it (JSON bytes); OSError when it cannot."""
    connection = _UnixConnection(socket_path, timeout)
    try:
        connection.request("POST", "/handler/fr_trace_json")
        response = connection.getresponse()
        body = response.read()
    except (http.client.HTTPException, ValueError) as exc:
        raise OSError(f"bad answer from {socket_path}: {exc}") from None
    finally:
        connection.close()
    if response.status != 200:
        raise OSError(f"{socket_path} answered {response.status}: {body[:200].decode(errors='replace')}")
    return body


def last_enqueued(trace: dict[str, Any]) -> dict[str, int]:
    """Process group id -> sequence number of the last collective the rank enqueued."""
    found = {}
    for group, status in (trace.get("pg_status") or {}).items():
        try:
            found[str(group)] = int(status["last_enqueued_collective"])
        except (KeyError, TypeError, ValueError):
            continue
    return found


def behind(traces: dict[str, dict[str, Any]]) -> list[str]:
    """Ranks behind the others: for some process group, their last enqueued collective is lower
    than the highest any rank reached. Empty when the recorder saw nothing or all agree."""
    seqs = {rank: last_enqueued(trace) for rank, trace in traces.items()}
    late = set()
    for group in {g for per_rank in seqs.values() for g in per_rank}:
        reached = {rank: per_rank[group] for rank, per_rank in seqs.items() if group in per_rank}
        top = max(reached.values())
        late.update(rank for rank, seq in reached.items() if seq < top)
    return sorted(late, key=lambda r: (not r.isdigit(), int(r) if r.isdigit() else 0, r))


def verdict(traces: dict[str, dict[str, Any]]) -> str:
    """One line for a person: who is behind, and at which collective."""
    if not traces:
        return "flight recorder: no rank's trace could be read"
    if not any(trace.get("entries") for trace in traces.values()):
        return ("flight recorder: no collective recorded (TORCH_FR_BUFFER_SIZE was 0 or unset when the "
                "process group was created)")
    late = behind(traces)
    if not late:
        return "flight recorder: every rank enqueued the same last collective"
    seqs = {rank: last_enqueued(trace) for rank, trace in traces.items()}
    top = {g: max(s[g] for s in seqs.values() if g in s) for g in {g for s in seqs.values() for g in s}}
    parts = [f"rank {rank} at collective {seq} of process group {group} (others reached {top[group]})"
             for rank in late for group, seq in sorted(seqs[rank].items()) if seq < top[group]]
    return "flight recorder: behind the others: " + "; ".join(parts)


def parse(body: bytes) -> dict[str, Any]:
    data = json.loads(body)
    if not isinstance(data, dict):
        raise ValueError("a flight-recorder trace is a JSON object")
    return data
