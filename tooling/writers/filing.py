"""A draft in words: its title, its JSON for scripts, its summary for people, its incident fields."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tooling.catalogue.automations import handled_by
from tooling.logs.drafts import Draft
from tooling.logs.unknown import UNCLASSIFIED
from tooling.records.model import record_time

MAX_TITLE = 200  # the schema's limit
MAX_LABEL = 100  # characters of an exception's message in a title
SEVERITY = "unknown"  # a log shows what failed, not what it cost the run: a person judges that


def _names(values: list[str], limit: int = 3) -> str:
    shown = ", ".join(values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


def where(draft: Draft) -> str:
    """Where, for a title: ' on ranks 3, 5 (node017)', ' on node042', or nothing when the log does not say."""
    nodes, ranks = sorted(draft.nodes), sorted(draft.ranks)
    ranks_text = f"rank{'s' if len(ranks) > 1 else ''} {_names([str(r) for r in ranks])}" if ranks else ""
    if ranks and nodes:
        return f" on {ranks_text} ({_names(nodes)})"
    return f" on {ranks_text or _names(nodes)}" if ranks or nodes else ""


def code_label(draft: Draft) -> str:
    """The code that tells this failure apart, or the one that decided its mode, if not in the
    title; an exception as its first example words it (the code keeps only some of its words)."""
    first = draft.first.recognition if draft.first else None
    if draft.mode.id == UNCLASSIFIED and draft.first:  # its template names it for grouping; people read its words
        label = draft.first.message.strip()
        return f" ({label if len(label) <= MAX_LABEL else label[:MAX_LABEL - 1] + '…'})"
    label = draft.codes[0] if draft.codes else first.via if first and first.via[:1].isalpha() else ""
    name = label.split(":", 1)[0]
    if "exception" in draft.mode.distinguish and draft.first and name and name in draft.first.text:
        label = draft.first.text[draft.first.text.index(name):].strip()
        label = label if len(label) <= MAX_LABEL else label[:MAX_LABEL - 1] + "…"
    return "" if not label or label.lower() in draft.mode.title.lower() else f" ({label})"


def title(draft: Draft) -> str:
    """From the mode and the examples: 'GPU fell off the bus (Xid 79) on node042'."""
    text = f"{draft.mode.title}{code_label(draft)}{where(draft)}"
    return text if len(text) <= MAX_TITLE else text[:MAX_TITLE - 1] + "…"


def detected_time(draft: Draft) -> str | None:
    """When the log says the failure was seen, as records write a time; None when it does not say."""
    return record_time(draft.detected_at) if draft.detected_at else None


def as_json(draft: Draft) -> dict[str, Any]:
    return {
        "title": title(draft), "failure_mode": draft.mode.id, "layer": draft.mode.layer,
        "symptom": draft.mode.symptom, "signatures": list(draft.signatures), "codes": list(draft.all_codes),
        "nodes": sorted(draft.nodes), "ranks": sorted(draft.ranks), "detected_at": detected_time(draft),
        "count": draft.count,
        "logs": [{"log": log, "first_line": lines.first, "last_line": lines.last, "count": lines.count}
                 for log, lines in draft.logs.items()],
        "notes": draft.notes(),
        **({"evidence": list(draft.evidence)} if draft.evidence else {}),
    }


def lines_text(draft: Draft) -> str:
    return "; ".join(f"{log} line{'s' if lines.count > 1 else ''} {lines.first}"
                     + (f"-{lines.last} ({lines.count} lines)" if lines.count > 1 else "")
                     for log, lines in draft.logs.items())


def summary(number: int, draft: Draft) -> list[str]:
    """The draft for a person: title, mode, codes, time and where in the logs, then its lines."""
    codes = ", ".join(draft.all_codes) or "none"
    out = [f"{number}. {title(draft)}",
           f"   {draft.mode.id} (layer {draft.mode.layer}, symptom {draft.mode.symptom}); codes: {codes}",
           f"   detected {detected_time(draft) or 'at an unknown time'}" +
           (f" ({'; '.join(draft.notes())})" if draft.notes() else ""),
           f"   {lines_text(draft)}"]
    out += [f"   evidence: {text}" for text in draft.evidence]  # of a failure no line names: numbers, frames
    return out + [f"   | {line}" for line in draft.signatures]


def incident_values(draft: Draft, *, by: str = "tooling scan") -> dict[str, Any]:
    """Keyword arguments of :func:`tooling.writers.scaffold.new_incident` for the draft; the caller
    adds run (or scope and cluster), severity and whatever its flags override."""
    notes = [f"Drafted by {by} from {lines_text(draft)}."]
    if draft.all_codes:
        notes.append(f"Codes: {', '.join(draft.all_codes)}.")
    if draft.evidence:
        notes.append(f"What else shows it: {'; '.join(draft.evidence)}.")
    notes.append(f"Times: {'; '.join(draft.notes())}.")
    if detected_time(draft) is None:
        notes.append("So detected_at is when this was filed.")
    links = [{"title": f"log scanned: {os.path.basename(log)}", "url": os.path.abspath(log)}
             for log in draft.logs if log != "standard input"]
    automation = handled_by(draft.signatures)  # every line of it signed by the automation that handled it
    return {
        "title": title(draft), "symptom": draft.mode.symptom, "layer": draft.mode.layer,
        "signatures": list(draft.signatures), "nodes": sorted(draft.nodes), "ranks": sorted(draft.ranks),
        "detected_at": detected_time(draft),
        "extra": {"failure_mode": draft.mode.id, "notes": " ".join(notes), "links": links,
                  **({"handled_by": automation} if automation else {})},
    }


def values_for(draft: Draft, where: dict[str, Any], *, by: str = "tooling scan") -> dict[str, Any]:
    """The draft's incident, placed ``where`` (``{"run": RUN, "extra": {}}``, or for a cluster
    ``{"run": None, "extra": {"scope": "cluster", "cluster": NAME}}``), severity not judged."""
    values = incident_values(draft, by=by)
    return {**values, "run": where["run"], "severity": SEVERITY, "extra": {**values["extra"], **where["extra"]}}


def file_all(incidents: list[dict[str, Any]], *, taken: int | None = None, **common: Any) -> list[Path]:
    """Write one incident per set of values, all or none: when one fails, those written before
    it are removed again, so a failed command leaves the repository as it was. ``taken``: the
    highest incident number the caller's listing shows (:func:`tooling.writers.ids.create_next`)."""
    # here: a draft in words needs none of it, and it imports the record checks and jsonschema (a
    # quarter of a second of `tooling scan`'s start)
    from tooling.writers.scaffold import new_incident

    created: list[Path] = []
    try:
        for values in incidents:
            created.append(new_incident(**common, **values, taken=taken))
            taken = None  # the next one lists the folder: the caller's listing does not show this one
    except BaseException:
        for path in created:
            path.unlink(missing_ok=True)
        raise
    return created
