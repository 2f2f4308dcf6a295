"""Everything the watchdog keeps of a hung job before it kills it: every rank's stack and flight
recorder, saved as files, and what they say.

Stacks come from py-spy (:func:`tooling.diagnose.rank_dumps.dump`, as `tooling stacks` takes them);
when py-spy cannot dump every rank (no ptrace permission: a container without SYS_PTRACE, Yama)
they come from faulthandler instead, for every rank, so that all stacks compared were taken the
same way: the monitor sends each rank the signal its :class:`tooling.resilience.Watchdog`
registered, and faulthandler's C handler appends every thread's stack to the rank's file.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooling.diagnose import flight_recorder, rank_dumps
from tooling.diagnose.stacks import DumpError, RankStack, parse_dump
from tooling.errors import UserError

TOOLS = ("auto", "py-spy", "faulthandler")
SIGNAL_WAIT = 10.0  # seconds for every rank's faulthandler output to appear
SETTLE = 0.3  # seconds without growth after which a faulthandler dump is complete


@dataclass
class HangEvidence:
    folder: Path
    stacks: list[RankStack] = field(default_factory=list)
    tool: str = ""
    traces: dict[str, dict[str, Any]] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)  # every file written, in order
    notes: list[str] = field(default_factory=list)  # what could not be had, and why


def gather(registrations: list[dict[str, Any]], *, folder: Path, tool: str = "auto") -> HangEvidence:
    """Stacks then flight recorders of the registered ranks, saved in ``folder`` (created)."""
    folder.mkdir(parents=True, exist_ok=False)
    evidence = HangEvidence(folder)
    ordered = sorted(registrations, key=lambda r: r["rank"])
    if tool in ("auto", "py-spy"):
        _py_spy(ordered, evidence)
    if tool == "faulthandler" or (tool == "auto" and not evidence.stacks):
        _faulthandler(ordered, evidence)
    _flight_recorders(ordered, evidence)
    return evidence


def _py_spy(registrations: list[dict[str, Any]], evidence: HangEvidence) -> None:
    pids = [r["pid"] for r in registrations]
    try:
        evidence.stacks = rank_dumps.dump_all(pids, save_dir=evidence.folder,
                                         ranks={r["pid"]: str(r["rank"]) for r in registrations})
    except (UserError, subprocess.TimeoutExpired) as exc:
        evidence.notes.append(f"py-spy could not dump every rank ({exc})")
        for path in evidence.folder.glob("rank-*.json"):  # half a set compares badly with the other half
            path.unlink()
        return
    evidence.tool = "py-spy"
    evidence.files += [evidence.folder / f"rank-{s.rank}.json" for s in evidence.stacks]


def _faulthandler(registrations: list[dict[str, Any]], evidence: HangEvidence) -> None:
    sizes = {}
    for reg in registrations:
        path = Path(reg["stacks"])
        sizes[reg["rank"]] = path.stat().st_size if path.exists() else 0
        try:
            os.kill(reg["pid"], reg["signal"])
        except ProcessLookupError:
            evidence.notes.append(f"rank {reg['rank']} (pid {reg['pid']}) was gone before its stack was taken")
    texts = _await_growth({reg["rank"]: Path(reg["stacks"]) for reg in registrations}, sizes)
    for rank, text in texts.items():
        if not text:
            evidence.notes.append(f"rank {rank} did not answer the faulthandler signal within {SIGNAL_WAIT:g} s")
            continue
        saved = evidence.folder / f"rank-{rank}.faulthandler.txt"
        saved.write_text(text, encoding="utf-8")
        try:
            evidence.stacks.append(RankStack(str(rank), parse_dump(text)))
        except DumpError as exc:
            evidence.notes.append(f"{saved.name}: {exc}")
        evidence.files.append(saved)
    evidence.tool = "faulthandler"


def _await_growth(paths: dict[int, Path], sizes: dict[int, int]) -> dict[int, str]:
    """What each file gained after the signal, once it stopped growing (or '' at the deadline)."""
    deadline, last, stable_since = time.monotonic() + SIGNAL_WAIT, dict(sizes), {}
    while time.monotonic() < deadline:
        now = time.monotonic()
        for rank, path in paths.items():
            size = path.stat().st_size if path.exists() else 0
            if size != last[rank]:
                last[rank], stable_since[rank] = size, now
        if all(rank in stable_since and now - stable_since[rank] >= SETTLE for rank in paths):
            break
        time.sleep(0.05)
    texts = {}
    for rank, path in paths.items():
        with open(path, "rb") as handle:
            handle.seek(sizes[rank])
            texts[rank] = handle.read(last[rank] - sizes[rank]).decode("utf-8", errors="replace")
    return texts


def _flight_recorders(registrations: list[dict[str, Any]], evidence: HangEvidence) -> None:
    for reg in registrations:
        if not reg.get("socket"):
            evidence.notes.append(f"rank {reg['rank']}: flight recorder {reg.get('flight_recorder', 'not served')}")
            continue
        try:
            body = flight_recorder.fetch(reg["socket"])
            evidence.traces[str(reg["rank"])] = flight_recorder.parse(body)
        except (OSError, ValueError) as exc:
            evidence.notes.append(f"rank {reg['rank']}: flight recorder not read ({exc})")
            continue
        saved = evidence.folder / f"rank-{reg['rank']}.flight-recorder.json"
        saved.write_text(json.dumps(evidence.traces[str(reg["rank"])], indent=1) + "\n", encoding="utf-8")
        evidence.files.append(saved)
