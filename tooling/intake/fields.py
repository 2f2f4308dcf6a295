"""Which incident fields a column can feed, and what shape each takes, read from the schema.

The incident schema stays the one list of fields: a column can feed any of its fields but
``kind``, the members of ``impact`` by dotted name (``impact.wall_hours_lost``), and two
columns that are no field of a record: ``description`` (free text: it becomes notes, and the
title and failure mode are guessed from it) and ``id`` (the logbook's own id of the row: the
rerun key, and what its references such as ``repeat_of`` name).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from tooling.records.schema import field_spec, resolve, schema_for

PSEUDO = ("description", "id")  # columns that feed the import, not a field of the same name
TOOLING_ONLY = ("watch_polls", "watch_counted", "handled_by")  # what tooling writes: watch's bookkeeping (two fields), the automation that handled it (an id of automations.yaml, no logbook column)
NESTED = "impact"
# new_incident's own parameters; every other field goes to it as `extra`
NAMED = ("title", "run", "severity", "symptom", "layer", "signatures", "nodes", "ranks",
         "detected_at", "reported_by")
# the lists a cell holds several items of, split at this separator unless the mapping says
SEPARATORS = {"signatures": "\n", "actions": "\n"}
DEFAULT_SEPARATOR = ","
# Column names logbooks use for a field under another name (compared as :func:`normal` makes
# them): fed by default, each reported as a guess, so a spreadsheet imports without a mapping.
USUAL_NAMES = {
    **dict.fromkeys(("date", "when", "day", "occurred", "occurred_at", "started", "start", "time",
                     "timestamp", "reported", "reported_at", "opened", "date_detected"), "detected_at"),
    **dict.fromkeys(("resolved", "fixed", "fixed_at", "closed", "closed_at", "date_resolved"), "resolved_at"),
    **dict.fromkeys(("summary", "issue", "event", "incident", "headline", "subject"), "title"),
    **dict.fromkeys(("details", "what_happened", "comment", "comments", "desc"), "description"),
    **dict.fromkeys(("node", "host", "hosts", "hostname", "hostnames", "machine", "machines"), "nodes"),
    **dict.fromkeys(("rank",), "ranks"),
    **dict.fromkeys(("job", "job_name", "run_id", "experiment"), "run"),
    **dict.fromkeys(("cause", "root", "rca", "diagnosis"), "root_cause"),
    **dict.fromkeys(("resolution", "fix", "fixed_by", "remediation", "mitigation", "action", "action_taken",
                     "actions_taken", "what_was_done", "workaround", "response"), "actions"),
    **dict.fromkeys(("error", "errors", "log", "log_line", "log_lines", "signature", "message"), "signatures"),
    **dict.fromkeys(("sev", "priority", "impact_level"), "severity"),
    **dict.fromkeys(("state", "resolution_status"), "status"),
    **dict.fromkeys(("component", "area", "category"), "layer"),
    **dict.fromkeys(("reporter", "reported_by_name", "filed_by"), "reported_by"),
    **dict.fromkeys(("labels", "tag"), "tags"),
    **dict.fromkeys(("mode", "failure"), "failure_mode"),
    **dict.fromkeys(("gpu_hours", "gpu_hours_lost"), "impact.gpu_hours_lost"),
    **dict.fromkeys(("hours_lost", "downtime_hours", "wall_hours", "downtime_h", "hours_down"),
                    "impact.wall_hours_lost"),
    **dict.fromkeys(("steps_lost",), "impact.steps_lost"),
    **dict.fromkeys(("count", "occurrences", "times"), "occurrences"),
}


@lru_cache(maxsize=None)
def spec(name: str) -> dict[str, Any]:
    """The resolved schema of a field, dotted for a member of impact."""
    if "." in name:
        parent, child = name.split(".", 1)
        return field_spec("incident", parent)["properties"][child]
    return field_spec("incident", name)


@lru_cache(maxsize=None)
def mappable() -> tuple[str, ...]:
    """Every name a mapping's ``columns`` may use, in schema order."""
    names: list[str] = []
    for name in schema_for("incident")["properties"]:
        if name == "kind" or name in TOOLING_ONLY:
            continue
        if name != "id":
            names.append(name)
        if name == NESTED:
            names.extend(f"{NESTED}.{child}" for child in spec(NESTED)["properties"])
    return (*names, *PSEUDO)


def shape(name: str) -> str:
    """How a cell becomes the field's value: enum, date, text, list, ints, int, number or json."""
    if name in PSEUDO:
        return "text"
    field = spec(name)
    if "enum" in field:
        return "enum"
    if field.get("pattern") == spec("detected_at")["pattern"]:
        return "date"
    kind = field.get("type")
    if kind == "array":
        items = resolve(field.get("items", {}), schema_for("incident").get("$defs", {}))
        return {"string": "list", "integer": "ints"}.get(items.get("type", ""), "json")
    return {"string": "text", "integer": "int", "number": "number"}.get(kind or "", "json")


def enum(name: str) -> list[str]:
    return list(spec(name).get("enum", []))


def separator(name: str, given: dict[str, str]) -> str:
    return given.get(name) or SEPARATORS.get(name, DEFAULT_SEPARATOR)


def usual_name(column: str) -> str | None:
    """The field a column feeds by a usual name, its unit of hours read as a word ("Downtime (h)")."""
    return USUAL_NAMES.get(normal(_HOURS.sub(" hours", column)))


_HOURS = re.compile(r"\s*[(\[](?:h|hrs?|hours)[)\]]", re.IGNORECASE)


def normal(name: str) -> str:
    """A column name compared with field names: 'Detected at' and 'detected-at' are detected_at."""
    return "_".join(name.strip().lower().replace("-", " ").split())
