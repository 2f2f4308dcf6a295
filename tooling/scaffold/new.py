"""Creating new records: incidents, postmortems and run pages, each valid from the start."""
from __future__ import annotations

import getpass
from datetime import datetime
from pathlib import Path
from typing import Any

from tooling.errors import UsageError, UserError
from tooling.records.kinds import KINDS
from tooling.records.load import parse_text
from tooling.records.model import parse_time
from tooling.records.schema import check_record, field_errors
from tooling.scaffold.ids import create_next
from tooling.scaffold.render import render
from tooling.records.atomic import create_file

HEADERS = {
    "incident": "Incident record. Fill in as you learn more; `tooling validate` checks it.",
    "postmortem": "Blameless postmortem: ask what must change so this cannot happen again, not who erred.",
    "run": "Live state of one training run. Update it every day; pages older than 24 h are flagged.",
}


INCIDENT_FLAGS = {
    "title": "--title", "run": "--run", "severity": "--severity", "symptom": "--symptom",
    "layer": "--layer", "signatures": "--signature", "nodes": "--node", "ranks": "--rank",
    "detected_at": "--detected-at", "reported_by": "--reported-by",
}


def now() -> str:
    return datetime.now().astimezone().replace(microsecond=0).isoformat()


def user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def existing_ids(root: Path, kind: str) -> list[str]:
    folder = root / KINDS[kind].directory
    prefix = KINDS[kind].id_prefix
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.yaml") if p.stem.startswith(prefix) or not prefix)


def _check_values(kind: str, values: dict[str, Any], flags: dict[str, str]) -> None:
    """Report bad values by the option they came from; derived fields only echo them."""
    errors = field_errors(kind, values)
    from_flags = [(f, m) for f, m in errors if f.split(".")[0] in flags]
    problems = [f"{flags.get(f.split('.')[0], f)}: {m}" for f, m in (from_flags or errors)]
    if problems:
        raise UsageError("; ".join(problems))


def _render_checked(kind: str, values: dict[str, Any], directory: Path) -> str:
    text = render(kind, values, directory=directory, header=HEADERS[kind])
    loaded = parse_text(str(directory / "new.yaml"), text)
    assert not loaded.findings and not check_record("new", loaded.data), "scaffold must validate"
    return text


def new_incident(*, root: Path, title: str, run: str, severity: str, symptom: str,
                 layer: str = "unknown", signatures: list[str] | None = None,
                 nodes: list[str] | None = None, ranks: list[int] | None = None,
                 detected_at: str | None = None, reported_by: str | None = None,
                 actions: list[str] | None = None, findings: list[str] | None = None) -> Path:
    """Write the next incidents/INC-NNNN.yaml; ``findings`` become timeline entries at detection."""
    runs = existing_ids(root, "run")
    if run not in runs:
        raise UsageError(f"--run: Expected one of: {runs} but received: {run!r}")
    detected = detected_at or now()
    values: dict[str, Any] = {
        "kind": "incident", "id": "INC-0000", "title": title, "run": run, "status": "open",
        "severity": severity, "symptom": symptom, "layer": layer,
        "signatures": signatures or [], "nodes": nodes or [], "ranks": ranks or [],
        "reported_by": reported_by or user(), "detected_at": detected,
        "timeline": [{"at": detected, "event": "Detected: " + title},
                     *({"at": detected, "event": f} for f in findings or [])],
        "impact": {"gpu_hours_lost": 0, "steps_lost": 0}, "actions": list(actions or []), "root_cause": "",
        "links": [], "tags": [],
    }
    _check_values("incident", values, INCIDENT_FLAGS)
    if parse_time(detected) is None:
        raise UsageError(f"--detected-at: {detected!r} is not a real date and time")
    directory = root / KINDS["incident"].directory
    return _create_numbered("incident", values, directory)


def _create_numbered(kind: str, values: dict[str, Any], directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    _render_checked(kind, values, directory)
    _, path = create_next(directory, KINDS[kind].id_prefix,
                          lambda record_id: render(kind, {**values, "id": record_id},
                                                   directory=directory, header=HEADERS[kind]))
    return path


def new_postmortem(*, root: Path, incidents: list[str], title: str | None = None,
                   authors: list[str] | None = None) -> Path:
    known = set(existing_ids(root, "incident"))
    unknown = [i for i in incidents if i not in known]
    if unknown:
        raise UsageError(f"no such incident: {', '.join(unknown)}; expected ids of files in "
                         f"{KINDS['incident'].directory}/")
    values: dict[str, Any] = {
        "kind": "postmortem", "id": "PM-0000",
        "title": title or f"Postmortem of {', '.join(incidents)}",
        "incidents": list(dict.fromkeys(incidents)), "status": "draft",
        "authors": authors or [user()], "created": now()[:10], "summary": "",
        "impact": {"gpu_hours_lost": 0, "steps_lost": 0, "description": ""},
        "timeline": [], "contributing_factors": [], "went_well": [], "went_wrong": [],
        "where_we_got_lucky": [], "action_items": [],
        "review": {"duration_minutes": 30, "attendees": []}, "lessons": [],
    }
    _check_values("postmortem", values, {"title": "--title", "authors": "--author"})
    return _create_numbered("postmortem", values, root / KINDS["postmortem"].directory)


def new_run(*, root: Path, name: str, title: str | None = None, owner: str | None = None) -> Path:
    values: dict[str, Any] = {
        "kind": "run", "id": name, "title": title or name, "owner": owner or user(),
        "summary": "", "state": "planned", "known_issues": [], "debugging": [],
        "oncall": {"members": [], "shifts": []}, "updated_at": now(), "updated_by": owner or user(),
    }
    _check_values("run", values, {"id": "NAME", "title": "--title", "owner": "--owner"})
    directory = root / KINDS["run"].directory
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.yaml"
    try:
        create_file(path, _render_checked("run", values, directory))
    except FileExistsError:
        raise UserError(f"{path}: a run named '{name}' already exists") from None
    return path
