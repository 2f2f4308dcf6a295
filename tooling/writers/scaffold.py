"""Creating new records: incidents, postmortems and run pages, each valid from the start."""
from __future__ import annotations

import getpass
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from tooling.catalogue.evidence import primary
from tooling.errors import FieldError, UserError
from tooling.fs.atomic import create_file
from tooling.records.findings import Finding, Severity, excerpt, shown_path
from tooling.records.kinds import KINDS
from tooling.records.layout import ids, path_of
from tooling.records.model import parse_time, record_time
from tooling.rules.record_check import findings
from tooling.rules.schema_rules import field_errors
from tooling.rules.time_rules import EARLIEST, LATEST
from tooling.writers.ids import create_next, folder_for
from tooling.writers.record_text import render

HEADERS = {
    "incident": "Incident record. Fill in as you learn more; `tooling validate` checks it.",
    "postmortem": "Blameless postmortem: ask what must change so this cannot happen again, not who erred.",
    "run": "Live state of one training run. Update it every day; pages older than 24 h are flagged.",
}
# The fields a caller gives; the others are derived from them (the timeline echoes the title).
INCIDENT_FIELDS = ("title", "run", "severity", "symptom", "layer", "signatures", "nodes", "ranks",
                   "detected_at", "reported_by")


def user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def _check_values(kind: str, values: dict[str, Any], given: tuple[str, ...]) -> None:
    """Report bad values by the field they were given as; derived fields only echo them."""
    errors = field_errors(kind, values)
    from_caller = [(f, m) for f, m in errors if f.split(".")[0] in given]
    if errors:
        raise FieldError(from_caller or errors)


def _render_checked(kind: str, values: dict[str, Any], directory: Path, now: datetime) -> str:
    """The file text, refused unless `tooling validate` would pass it (as far as a record can be
    checked before its id is chosen: its text, schema and own rules): the schema of the values is
    checked before, but the limits of the loader (a number too large, a file over 1 MiB) and the
    calendar are only seen in the text as it will be written."""
    text = render(kind, values, directory=directory, header=HEADERS[kind])
    found = findings(str(directory / "new.yaml"), text, others=None, now=now)
    errors = [f for f in found if f.severity is Severity.ERROR]
    if errors:
        raise _refusal(kind, text, errors, directory)
    return text


def _refusal(kind: str, text: str, errors: list[Finding], directory: Path) -> UserError:
    """A FieldError when each problem sits under a field of the text (so a command names its
    option), else the findings as they are; either way nothing is written."""
    lines = text.splitlines()
    named = [(field, f.message) for f in errors if (field := _field_above(lines, f.line)) is not None]
    if len(named) == len(errors):
        return FieldError(named)
    return UserError(f"{shown_path(directory)}: no {kind} created, it would not validate: "
                     + "; ".join(f"[{f.rule}] {f.message}" for f in errors))


def _field_above(lines: list[str], line: int) -> str | None:
    """The top-level field whose value holds 1-based ``line`` of a rendered file."""
    for text in reversed(lines[1:line]):  # line 1 is the modeline, never a field
        if (found := re.match(r"([A-Za-z_][\w-]*):", text)) is not None:
            return found.group(1)
    return None


def recognised_mode(signatures: list[str]) -> str | None:
    """The specific failure mode the verbatim signatures are recognised as, if any."""
    found = primary({"signatures": signatures})
    return found.mode.id if found.mode is not None and not found.mode.generic else None


def require_run(root: Path, run: str) -> None:
    """An incident names an existing run: checked before any work that would be lost."""
    runs = ids(root, "run")
    if run not in runs and not runs:  # "one of: []" would name nothing to pick: say what to do first
        raise FieldError([("run", f"no run record in runbooks/runs/ yet but received: {excerpt(run)}; expected a run "
                                  "written first with tooling new-run NAME")])
    if run not in runs:
        raise FieldError([("run", f"Expected one of: {runs} but received: {excerpt(run)}")])


def new_incident(*, root: Path, now: datetime, title: str, run: str | None, severity: str, symptom: str,
                 layer: str = "unknown", signatures: list[str] | None = None,
                 nodes: list[str] | None = None, ranks: list[int] | None = None,
                 detected_at: str | None = None, reported_by: str | None = None,
                 actions: list[str] | None = None, findings: list[str] | None = None,
                 extra: dict[str, Any] | None = None, taken: int | None = None) -> Path:
    """Write the next incidents/INC-NNNN.yaml; ``findings`` become timeline entries at detection;
    ``taken``: the highest number the caller knows taken (see :func:`tooling.writers.ids.create_next`).

    ``extra`` holds any other schema fields (failure_mode, keywords, notes, scope and cluster,
    status with resolved_at, occurrences, impact, links): they override the defaults.
    """
    extra = dict(extra or {})
    if extra.get("scope") != "cluster":
        require_run(root, run or "")
    detected = detected_at or record_time(now)
    values: dict[str, Any] = {
        "kind": "incident", "id": "INC-0000", "title": title, "status": "open",
        "severity": severity, "symptom": symptom, "layer": layer,
        "signatures": signatures or [], "nodes": nodes or [], "ranks": ranks or [],
        "reported_by": reported_by or user(), "detected_at": detected,
        "timeline": [{"at": detected, "event": "Detected: " + title},
                     *({"at": detected, "event": f} for f in findings or [])],
        "impact": {"gpu_hours_lost": 0, "steps_lost": 0}, "actions": list(actions or []), "root_cause": "",
        "links": [], "tags": [],
    }
    if run is not None:
        values["run"] = run
    values.update(extra)
    if "failure_mode" not in values and (mode := recognised_mode(values["signatures"])) is not None:
        values["failure_mode"] = mode  # what the log lines say it is; a person can still change it
    _check_values("incident", values, (*INCIDENT_FIELDS, *extra))
    when = parse_time(detected)
    if when is None:
        raise FieldError([("detected_at", f"{excerpt(detected)} is not a real date and time")])
    if not EARLIEST <= when.date() <= LATEST:  # as `tooling validate` says of every date
        raise FieldError([("detected_at", f"{excerpt(detected)} is outside the years {EARLIEST.year}-"
                                          f"{LATEST.year}; expected a date in the life of a training run")])
    return _create_numbered("incident", values, root / KINDS["incident"].directory, now, taken=taken)


def _create_numbered(kind: str, values: dict[str, Any], directory: Path, now: datetime, *,
                     taken: int | None = None) -> Path:
    """Render and check the file once, then take the next free number for it."""
    with folder_for(directory):
        placeholder = values["id"]
        text = _render_checked(kind, values, directory, now)
        line = f"\nid: {placeholder}\n"
        assert text.count(line) == 1, "the id is written once, at the top level"
        _, path = create_next(directory, KINDS[kind].id_prefix,
                              lambda record_id: text.replace(line, f"\nid: {record_id}\n"), taken=taken)
    return path


def new_postmortem(*, root: Path, now: datetime, incidents: list[str], title: str | None = None,
                   authors: list[str] | None = None) -> Path:
    known = set(ids(root, "incident"))
    unknown = [i for i in incidents if i not in known]
    if unknown:
        raise FieldError([("incidents", f"no such incident: {', '.join(excerpt(i) for i in unknown)}; "
                                        f"expected ids of files in {KINDS['incident'].directory}/")])
    values: dict[str, Any] = {
        "kind": "postmortem", "id": "PM-0000",
        "title": title or f"Postmortem of {', '.join(incidents)}",
        "incidents": list(dict.fromkeys(incidents)), "status": "draft",
        "authors": authors or [user()], "created": now.date().isoformat(), "summary": "",
        "impact": {"gpu_hours_lost": 0, "steps_lost": 0, "description": ""},
        "timeline": [], "contributing_factors": [], "went_well": [], "went_wrong": [],
        "where_we_got_lucky": [], "action_items": [],
        "review": {"duration_minutes": 30, "attendees": []}, "lessons": [],
    }
    _check_values("postmortem", values, ("title", "authors"))
    return _create_numbered("postmortem", values, root / KINDS["postmortem"].directory, now)


def _default_title(name: str) -> str:
    """The run's name, as its title; a name shorter than a title may be ("r1") says it is a run, so
    that a run named so is not refused for a --title nobody gave."""
    return name if len(name) >= 3 else f"Run {name}"


def new_run(*, root: Path, now: datetime, name: str, title: str | None = None, owner: str | None = None) -> Path:
    values: dict[str, Any] = {
        "kind": "run", "id": name, "title": title or _default_title(name), "owner": owner or user(),
        "summary": "", "state": "planned", "known_issues": [], "debugging": [],
        "oncall": {"members": [], "shifts": []}, "updated_at": record_time(now), "updated_by": owner or user(),
    }
    _check_values("run", values, ("id", "title", "owner"))
    directory = root / KINDS["run"].directory
    path = directory / f"{name}.yaml"
    with folder_for(directory):
        if name in ids(root, "run"):  # perhaps as NAME.yml, which create_file would not see
            raise UserError(f"{path_of(root, name, kinds=['run'])}: a run named {excerpt(name)} already exists")
        # `tooling set NAME` finds a record by id alone: a run named like a ladder would take its place
        taken = [k for k in KINDS if KINDS[k].translates is None and name in ids(root, k)]
        if taken:
            raise FieldError([("id", f"{excerpt(name)} is the id of "
                                     f"{path_of(root, name, kinds=taken).relative_to(root)} already; "
                                     "expected a name no record has")])
        try:
            create_file(path, _render_checked("run", values, directory, now))
        except FileExistsError:
            raise UserError(f"{path}: a run named {excerpt(name)} already exists") from None
    return path
