"""Rules about an incident's failure mode, against the catalogue (tooling/catalogue/).

- ``unknown-failure-mode`` (error): ``failure_mode`` names no mode of the catalogue; the
  closest ids are offered.
- ``failure-mode-suggestion`` (note): no ``failure_mode`` yet, but the signatures are recognised
  as one (set it, or repeats will still group by the signatures), or the description suggests
  one (confirm it by setting it).
"""
from __future__ import annotations

import difflib
from typing import Iterator

from tooling.failures.catalogue import catalogue
from tooling.failures.recognise import recognise_all, suggest
from tooling.records.findings import Finding, Severity, excerpt
from tooling.records.load import locate
from tooling.records.model import Record


def check_failure_modes(records: list[Record]) -> Iterator[Finding]:
    for record in records:
        if record.kind != "incident":
            continue
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


def _suggestion(record: Record) -> Iterator[Finding]:
    signatures = [str(s) for s in record.get("signatures", [])]
    seen = recognise_all(signatures) if signatures else None
    if seen is not None and seen.mode is not None and not seen.mode.generic:
        yield Finding(record.path, *locate(record.path, ["signatures"], at_key=True), "failure-mode-suggestion",
                      f"the signatures are failure mode {seen.mode.id} ({seen.via}); "
                      f"record it: tooling set {record.id} failure_mode={seen.mode.id}", Severity.NOTE)
        return
    text = " ".join([str(record.get("title", "")), *map(str, record.get("keywords", [])),
                     str(record.get("root_cause", "")), str(record.get("notes", ""))])
    modes = [m for m in suggest(text) if not m.generic]
    if len(modes) == 1:
        yield Finding(record.path, *locate(record.path, ["title"]), "failure-mode-suggestion",
                      f"the description suggests failure mode {modes[0].id} ({modes[0].title}); "
                      f"if so: tooling set {record.id} failure_mode={modes[0].id}", Severity.NOTE)
