"""`tooling triage {nan,hang,divergence}`: walk the ladder on this machine, cheapest check first."""
from __future__ import annotations

import shlex
import socket
import sys
from pathlib import Path

from tooling.diagnose.triage import StepResult, triage
from tooling.errors import UsageError
from tooling.records.kinds import KINDS
from tooling.records.load import load_file
from tooling.scaffold.new import new_incident


def _print(result: StepResult, total: int) -> None:
    head = f"[{result.number}/{total}] {result.name}"
    print(f"{head}: {result.status}" + (f" ({result.command})" if result.command and result.status != "skipped" else ""))
    if result.status == "skipped":
        print(f"    skipped: {result.detail}")
    else:
        for line in result.detail.splitlines():
            print(f"    | {line}")
        print(f"    look for: {result.look_for} (clears: {result.clears})")


def triage_command(symptom: str, *, root: Path, pid: int | None, timeout: float, incident_run: str | None,
                   argv: list[str]) -> int:
    path = root / KINDS["ladder"].directory / f"{symptom}.yaml"
    loaded = load_file(str(path)) if path.is_file() else None
    if loaded is None or loaded.findings:
        raise UsageError(f"no valid ladder for '{symptom}' at {path}")
    ladder = loaded.data
    print(f"{ladder['title']}: {len(ladder['steps'])} checks, cheapest first, on {socket.gethostname()}")
    results = triage(ladder, pid=pid, timeout=timeout)
    for result in results:
        _print(result, len(results))
    ran = [r for r in results if r.status != "skipped"]
    print(f"{len(ran)} checks ran, {len(results) - len(ran)} skipped")
    if incident_run is not None:
        created = new_incident(
            root=root, run=incident_run, severity="sev3", symptom=ladder["symptom"], layer="unknown",
            title=f"Triage of a {symptom} on {socket.gethostname()}: {len(ran)} checks ran",
            actions=[f"tooling {shlex.join(argv)}"],
            findings=[f"{r.name}: {r.status}: {' '.join(r.detail.split())[:300]}" for r in results])
        print(f"drafted {created.relative_to(root)}", file=sys.stderr)
    return 0
