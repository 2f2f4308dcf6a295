"""Rules about an incident's failure mode, against the catalogue (tooling/catalogue/).

- ``unknown-failure-mode`` (error): ``failure_mode`` names no mode of the catalogue; the
  closest ids are offered.
- ``failure-mode-suggestion`` (note): no ``failure_mode`` yet, but the signatures are recognised
  as one (set it, or repeats will still group by the signatures), or the description suggests
  one (confirm it by setting it).
- ``unknown-automation`` (error): ``handled_by`` names no automation of the catalogue.
"""
from __future__ import annotations

import difflib
from typing import Iterator

from tooling.catalogue.automations import by_id, catalogue as automations
from tooling.catalogue.evidence import primary
from tooling.catalogue.modes import catalogue
from tooling.records.findings import Finding, Severity, excerpt
from tooling.records.locate import locate, locate_top
from tooling.records.model import Record


def check_failure_modes(records: list[Record]) -> Iterator[Finding]:
    for record in records:
        if record.kind != "incident":
            continue
        automation = record.get("handled_by")
        if isinstance(automation, str) and by_id(automation) is None:  # another type: the schema's finding
            yield _unknown_automation(record, automation)
        mode = record.get("failure_mode")
        if mode is not None:
            yield from _known(record, mode)
        else:
            yield from _suggestion(record)


def _known(record: Record, mode: str) -> Iterator[Finding]:
    ids = catalogue().ids()
    if mode in ids:
        return
    close = difflib.get_close_matches(mode, ids, n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else \
        "; expected the id of a failure mode of the catalogue (see the failure-mode page)"
    yield Finding(record.path, *locate(record.path, ["failure_mode"]), "unknown-failure-mode",
                  f"failure mode {excerpt(mode)} is not in the catalogue{hint}")


def _unknown_automation(record: Record, automation: str) -> Finding:
    ids = [a.id for a in automations()]
    close = difflib.get_close_matches(automation, ids, n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else \
        f"; expected the id of an automation of the catalogue ({', '.join(ids)})"
    return Finding(record.path, *locate(record.path, ["handled_by"]), "unknown-automation",
                   f"handled_by {excerpt(automation)} is not in the automation catalogue{hint}")


def _suggestion(record: Record) -> Iterator[Finding]:
    found = primary(record.data)
    mode = found.mode
    if mode is None or mode.generic:
        return
    if found.source == "signatures":
        via = next((r.via for r in found.recognised if r.mode is mode), "")
        yield Finding(record.path, *locate_top(record.path, "signatures"), "failure-mode-suggestion",
                      f"the signatures are failure mode {mode.id} ({via}); "
                      f"record it: tooling set {record.id} failure_mode={mode.id}", Severity.NOTE)
    elif found.source == "description":
        yield Finding(record.path, *locate_top(record.path, "title"), "failure-mode-suggestion",
                      f"the description suggests failure mode {mode.id} ({mode.title}); "
                      f"if so: tooling set {record.id} failure_mode={mode.id}", Severity.NOTE)
