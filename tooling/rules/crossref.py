"""Rules across records, and :func:`check_all`, which runs every rule a validation applies.

Each rule has a stable id that appears in its findings. The rules on dates and times are in
:mod:`~tooling.rules.time_rules`, those between an overlay and its English record in
:mod:`~tooling.rules.overlay_rules`."""
from __future__ import annotations

import os
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable, Iterator

from tooling.messages import counted
from tooling.records.findings import Finding, Severity, excerpt, printable
from tooling.records.kinds import KINDS
from tooling.records.layout import is_id, record_paths
from tooling.records.locate import Keys, finding_at, locate
from tooling.records.model import Record, parse_time
from tooling.records.runs import MIN_ROTATION, is_live, rotation
from tooling.rules.others import Others, file_name
from tooling.rules.overlay_rules import check_overlays
from tooling.rules.repeat_rules import check_repeat_cycles
from tooling.rules.time_rules import check_clock, check_times


def unreadable_file(record: Record, kind: str, record_id: Any, index: Others) -> str | None:
    """The file of ``record``'s repository that would hold the ``kind`` record ``record_id`` when it
    is there but did not load as a record (bad YAML, no kind), or None."""
    if not (isinstance(record_id, str) and is_id(kind, record_id)):
        return None
    parents = Path(os.path.abspath(record.path)).parents
    depth = len(Path(KINDS[record.kind].directory).parts)  # the repository is that far above the record
    if depth >= len(parents):
        return None
    files = record_paths(parents[depth], kind, record_id)
    return next((str(f) for f in files if f.is_file() and not index.loaded(str(f))), None)


def _mismatch(record: Record) -> str:
    if KINDS[record.kind].translates is None:
        return f"id '{record.id}' does not match the file name; expected {excerpt(record.stem)}"
    return (f"id '{record.id}' and lang '{record.get('lang')}' do not match the file name '{record.stem}'; "
            "expected the file named <id>.<lang>.yaml")


def check_ids(records: list[Record], index: Others) -> Iterator[Finding]:
    """id-mismatch and duplicate-id (reported on every validated file that shares the id)."""
    for record in records:
        if file_name(record) != record.stem:
            yield finding_at(record, ["id"], "id-mismatch", _mismatch(record))
        others = sorted(p for p in index.sharing(record.kind, file_name(record)) if p != record.path)
        if others:
            yield finding_at(record, ["id"], "duplicate-id",
                             f"id '{record.id}' is also used by {printable(os.path.relpath(others[0]))}; "
                             "expected a unique id")


def _references(record: Record) -> Iterator[tuple[Keys, str, Any]]:
    """(where, kind it must name, value) for every reference a record makes."""
    data = record.data
    if record.kind == "incident":
        if "run" in data:  # an incident of scope cluster names a cluster instead
            yield ["run"], "run", data["run"]
        if "repeat_of" in data:
            yield ["repeat_of"], "incident", data["repeat_of"]
        for field in ("related", "not_repeat_of"):
            for i, ref in enumerate(data.get(field, [])):
                yield [field, i], "incident", ref
    elif record.kind == "postmortem":
        for i, ref in enumerate(data.get("incidents", [])):
            yield ["incidents", i], "incident", ref
    elif record.kind == "run":
        for field in ("known_issues", "debugging"):
            for i, item in enumerate(data.get(field, [])):
                if "incident" in item:
                    yield [field, i, "incident"], "incident", item["incident"]
        # a scheduler event names the incident drafted for a failed job (tooling job, the Epilog)
        for i, event in enumerate(data.get("feed", {}).get("events", [])):
            if "incident" in event:
                yield ["feed", "events", i, "incident"], "incident", event["incident"]


def check_references(records: list[Record], index: Others) -> Iterator[Finding]:
    """unresolved-ref and self-reference."""
    for record in records:
        for keys, kind, value in _references(record):
            if kind == record.kind and value == record.id:
                yield finding_at(record, keys, "self-reference",
                                 f"'{value}' refers to this record itself; expected another {kind}")
            elif index.named(kind, value) is None:
                broken = unreadable_file(record, kind, value, index)
                if broken is None:
                    yield finding_at(record, keys, "unresolved-ref",
                                     f"{kind} '{value}' does not exist; expected the id of an existing {kind} record")
                elif broken not in index.shown:  # its own error is the one to fix: say where, once
                    where = os.path.relpath(broken)
                    yield finding_at(record, keys, "unresolved-ref",
                                     f"{kind} '{value}' is in {where}, which cannot be read as a record; expected "
                                     f"a {kind} record without errors (tooling validate {where})")


def check_status(records: list[Record]) -> Iterator[Finding]:
    """resolved-without-time: a resolved incident says when."""
    for record in records:
        if record.kind == "incident" and record.get("status") == "resolved" and "resolved_at" not in record.data:
            yield finding_at(record, ["status"], "resolved-without-time",
                             "status is 'resolved' but resolved_at is missing; expected resolved_at")


def check_ladders(records: list[Record]) -> Iterator[Finding]:
    """ladder-order: checks go from cheap to expensive."""
    for record in records:
        if record.kind != "ladder":
            continue
        steps = record.get("steps", [])
        for i in range(1, len(steps)):
            before, cost = steps[i - 1]["cost_seconds"], steps[i]["cost_seconds"]
            if cost < before:
                yield finding_at(record, ["steps", i, "cost_seconds"], "ladder-order",
                                 f"step {i + 1} costs {cost} s, less than step {i} ({before} s); "
                                 "expected steps ordered cheapest first")


def ladder_symptoms(data: dict[str, Any]) -> set[str]:
    """The incident symptoms a ladder serves: its own and the close ones it lists under also_for.
    Read defensively: the universe holds records that failed their schema too."""
    also = data.get("also_for")
    found = {data.get("symptom"), *(also if isinstance(also, list) else [])}
    return {s for s in found if isinstance(s, str)}


def check_ladder_coverage(records: list[Record], index: Others) -> Iterator[Finding]:
    """ladder-missing (warning): a symptom with incidents and no ladder to walk when paged for it.

    Reported once per symptom, on the first validated incident that has it. A repository that keeps
    no ladder at all (an incident log that only uses the pre-commit hook) has not taken ladders up:
    a warning per symptom there would be noise that --strict turns into a failed commit.
    Asked only when a record is an incident with a symptom: first the ladders of the ladders'
    folder (when they serve every such symptom, nothing else can make one a warning: a write reads
    no other record), then every ladder, and every incident only to count those of a symptom said."""
    symptoms = {s for r in records if r.kind == "incident" and isinstance(s := r.get("symptom"), str) and s != "other"}
    if not symptoms or symptoms <= _served(index.in_folder("ladder")):
        return
    ladders = index.every("ladder")
    if not ladders:
        return
    covered = _served(ladders)
    counts: Counter[str] | None = None
    reported: set[str] = set()
    for record in records:
        symptom = record.get("symptom") if record.kind == "incident" else None
        # 'other' is no symptom to write a ladder for: it says the symptom is not known
        if not isinstance(symptom, str) or symptom in covered or symptom in reported or symptom == "other":
            continue
        reported.add(symptom)
        if counts is None:
            counts = Counter(s for r in index.every("incident").values() if isinstance(s := r.data.get("symptom"), str))
        yield Finding(record.path, *locate(record.path, ["symptom"]), "ladder-missing",
                      f"symptom '{symptom}' has {counted(counts[symptom], 'incident')} but no ladder; expected "
                      f"runbooks/ladders/{symptom}.yaml, or '{symptom}' under also_for of the closest ladder",
                      Severity.WARNING)


def _served(ladders: dict[str, Record]) -> set[str]:
    return set().union(*(ladder_symptoms(r.data) for r in ladders.values()))


DRAFT_GRACE = timedelta(days=14)  # a postmortem is reviewed within two weeks of resolution


def check_drafts(records: list[Record], index: Others, now: datetime) -> Iterator[Finding]:
    """stale-draft (warning): a postmortem still in draft two weeks after its incidents ended."""
    for record in records:
        if record.kind != "postmortem" or record.get("status") != "draft":
            continue
        incidents = [index.named("incident", i) for i in record.get("incidents", [])]
        ends = [parse_time(r.get("resolved_at")) for r in incidents if r is not None]
        if not ends or any(e is None for e in ends):
            continue  # not all resolved yet: the clock has not started
        days = (now - max(e for e in ends if e is not None)).days
        if timedelta(days=days) > DRAFT_GRACE:
            yield Finding(record.path, *locate(record.path, ["status"]), "stale-draft",
                          f"still a draft {days} days after its incidents were resolved; expected it "
                          "reviewed within 14 days (tooling review --submit, then --approve)", Severity.WARNING)


def check_rotation(records: list[Record]) -> Iterator[Finding]:
    """rotation-too-small and night-pages-unbalanced (warnings): people break before runs do."""
    for record in records:
        if record.kind != "run" or not is_live(record.data) or "oncall" not in record.data:
            continue
        oncall = record.data["oncall"]
        people = rotation(record.data)
        if len(people) < MIN_ROTATION:
            yield Finding(record.path, *locate(record.path, ["oncall"], at_key=True), "rotation-too-small",
                          f"{len(people)} person on the rotation; expected at least {MIN_ROTATION} for a 24/7 run "
                          "(one person on call every day breaks within a month; 4 is better)", Severity.WARNING)
        nights = [s["person"] for s in oncall.get("shifts", []) if s.get("night")]
        for person, count in Counter(nights).items():
            if len(nights) >= 2 and count * 2 > len(nights):
                yield Finding(record.path, *locate(record.path, ["oncall", "shifts"], at_key=True),
                              "night-pages-unbalanced", f"{person} holds {count} of {len(nights)} night shifts; "
                              "expected nobody to carry more than half of the night pages", Severity.WARNING)


RULES: tuple[Callable[[list[Record]], Iterator[Finding]], ...] = (
    check_times, check_status, check_ladders, check_rotation)
ERROR_RULES = (check_times, check_status, check_ladders)  # check_rotation only warns
# the rules whose findings depend on nothing but the record's file (not the time now: a run's
# rotation is checked only while it is live), so they can be kept with the file's check
OWN_RULES = ERROR_RULES


def check_all(records: list[Record], index: Others, *, now: datetime, warnings: bool = True,
              own: bool = True) -> list[Finding]:
    """Findings of every cross-record rule for ``records``; references resolve in ``index``
    (every record: :class:`~tooling.rules.others.RecordIndex`, or those a write asks for:
    :class:`~tooling.rules.others.Repository`). ``warnings`` False: only the rules that find
    errors, for a writer that neither shows warnings nor refuses for them (some warning rules
    count over every record). ``own`` False: the rules of :data:`OWN_RULES` are left to the
    caller (validate keeps their findings with each file's check)."""
    found = list(check_ids(records, index))
    found.extend(check_references(records, index))
    found.extend(check_repeat_cycles(records, index))
    if warnings:
        found.extend(check_drafts(records, index, now))
        found.extend(check_clock(records, now))
        found.extend(check_ladder_coverage(records, index))
        found.extend(check_overlays(records, index.named))
    for rule in RULES if warnings else ERROR_RULES:
        if own or rule not in OWN_RULES:
            found.extend(rule(records))
    return found


def own_rules(records: list[Record], *, now: datetime) -> list[Finding]:
    """The findings of the rules of :func:`check_all` that ask no other record and not the file's
    name, in its order: what a new record is held to before its id is chosen."""
    return [*check_clock(records, now), *(f for rule in RULES for f in rule(records))]
