"""What the watchdog says about a hang it ended: a summary beside the dumps, and the fields of
the hang incident it drafts (the stacks' verdict from :func:`tooling.diagnose.stacks.incident_values`,
the flight recorder's, the silence that set it off, and a link to every file it kept)."""
from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tooling.diagnose import flight_recorder
from tooling.diagnose.capture import HangEvidence
from tooling.diagnose.monitor import HeartbeatStall
from tooling.diagnose.stacks import incident_values, report
from tooling.resilience.watchdog import EXIT_HANG

SUMMARY = "watchdog.txt"
# its id in tooling/catalogue/automations.yaml: the job it ended restarts without a person
AUTOMATION = "collective-hang-watchdog"


def summary(stall: HeartbeatStall, evidence: HangEvidence, *, killed: list[int], left: list[int]) -> str:
    """The text of watchdog.txt: why it fired, the stacks grouped, the flight recorder, the end."""
    lines = [stall.describe(), f"stacks by {evidence.tool or 'nothing'}:"]
    lines += [f"  {line}" for line in (report(evidence.stacks).splitlines() if evidence.stacks else ["none taken"])]
    lines.append(flight_recorder.verdict(evidence.traces))
    lines += [f"note: {note}" for note in evidence.notes]
    lines.append(f"ended the job: {len(killed)} process{'es' * (len(killed) != 1)} killed "
                 f"(pids {', '.join(map(str, killed)) or 'none'}); exit {EXIT_HANG}")
    if left:
        lines.append(f"still there after SIGKILL (stuck in the kernel?): pids {', '.join(map(str, left))}")
    return "\n".join(lines) + "\n"


def incident_fields(stall: HeartbeatStall, evidence: HangEvidence, *, incident_dir: Path, killed: list[int],
                    detected: datetime) -> dict[str, Any]:
    """Keyword arguments of :func:`tooling.writers.scaffold.new_incident` (the caller adds root,
    now and run): the stacks decide title and ranks; the flight recorder names the rank(s)
    behind when no stack differs."""
    values = incident_values(evidence.stacks) if evidence.stacks else _without_stacks(stall)
    late = flight_recorder.behind(evidence.traces)
    if not values["ranks"]:
        values["ranks"] = [int(rank) for rank in late if rank.isdigit()]
    values["findings"] = [stall.describe(), *values["findings"], flight_recorder.verdict(evidence.traces)]
    values["actions"] = [f"tooling watchdog took every rank's stack ({evidence.tool or 'none'}) and flight "
                         f"recorder, killed the job's {len(killed)} processes and exited {EXIT_HANG} so that "
                         "auto-resume restarts it from its last checkpoint"]
    values["nodes"] = sorted({str(r["host"]) for r in stall.registrations})
    extra: dict[str, Any] = {
        "failure_mode": "training.hang", "tags": ["watchdog"], "links": _links(evidence, incident_dir),
        "handled_by": AUTOMATION,
        "notes": " ".join([f"Drafted by tooling watchdog (timeout {stall.timeout:g} s, stacks by "
                           f"{evidence.tool or 'none'}).", *(f"{note}." for note in evidence.notes)]),
    }
    stopped = stall.stopped_at()
    if stopped is not None and stopped <= detected.timestamp():
        extra["started_at"] = datetime.fromtimestamp(int(stopped), timezone.utc).astimezone(detected.tzinfo).isoformat()
    return {**values, "extra": extra}


def _without_stacks(stall: HeartbeatStall) -> dict[str, Any]:
    return {"title": f"Training made no progress for {stall.timeout:g} s; no rank's stack could be taken",
            "severity": "sev2", "symptom": "hang", "layer": "unknown", "signatures": [], "ranks": [],
            "findings": []}


def _links(evidence: HangEvidence, incident_dir: Path) -> list[dict[str, str]]:
    """Every file kept, relative to the incident's folder as the records' links are."""
    def url(path: Path) -> str:
        relative = Path(os.path.relpath(path, incident_dir)).as_posix()
        return relative if relative.startswith("../") else f"./{relative}"
    titles = {".json": "stack (py-spy)", ".txt": "stack (faulthandler)"}
    links = [{"title": "watchdog summary", "url": url(evidence.folder / SUMMARY)}]
    for path in evidence.files:
        what = "flight recorder" if path.name.endswith(".flight-recorder.json") else titles[path.suffix]
        links.append({"title": f"{what} of rank {path.name.split('.')[0].removeprefix('rank-')}", "url": url(path)})
    return links
