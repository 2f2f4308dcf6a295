"""Whether a record's text is valid: the one check behind ``tooling validate``, new records and edits.

:func:`findings` says what validate would report of a text as the content of a path: what reading
says (over 1 MiB, not UTF-8, a tab, a forbidden character), what loading says (YAML, its guards),
the record's own rules (its schema, its failure mode: :func:`own_findings`), then, for a record
without errors, the cross-record rules (:func:`tooling.rules.crossref.check_all`) against the
other records, which come from a :class:`Universe`: every record already loaded
(:class:`~tooling.rules.others.Listed`, as ``tooling set`` and ``review`` have them) or the
repository, read only as far as the rules ask (:class:`~tooling.rules.others.Repository`, for
the machine writes). A new record, whose id and file are not chosen yet, is held to the rules that
ask no other record and not its name (``others`` None).

``validate`` reads its files with :func:`file_findings` (the same reading from disk, never
following a link out of the repository) and runs the cross-record rules over all of them at once.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from tooling.catalogue.checks import local_findings
from tooling.catalogue.local import is_local
from tooling.catalogue.modes import shipped_entries
from tooling.records.findings import Finding, Severity
from tooling.records.load import Loaded, load_within, no_collection, parse_text
from tooling.records.model import Record
from tooling.records.reading import decode_text
from tooling.rules.crossref import check_all, own_rules
from tooling.rules.mode_rules import check_failure_modes
from tooling.rules.others import Others, usable
from tooling.rules.schema_rules import check_record


class Universe(Protocol):
    def around(self, record: Record) -> Others:
        """The other records, as the rules see them from ``record`` (the text checked, at its path)."""


# The text loaded last and what loading said: a writer checks the text it writes, then reads
# the same text back at its next write (the reporter, once a minute); it is not parsed again.
_LAST: tuple[str, str, Loaded] | None = None


def load_text(path: str, text: str) -> Loaded:
    """What reading and loading say of ``text`` as the content of ``path``: its data, or the
    findings that stop it (a writer refuses what a reader would refuse)."""
    global _LAST
    if _LAST is not None and _LAST[0] == path and _LAST[1] == text:
        return _LAST[2]
    _, unreadable = decode_text(path, text.encode("utf-8"))
    loaded = Loaded(path, findings=[unreadable]) if unreadable is not None else parse_text(path, text)
    _LAST = (path, text, loaded)
    return loaded


def own_findings(path: str, data: Any) -> list[Finding]:
    """What a loaded record says about itself: its schema, then the rules that need no other
    record (its failure mode against the catalogue)."""
    found = check_record(path, data)
    if usable(data) and not _errors(found):
        found += check_failure_modes([Record(path, data)])
    return found


def file_findings(path: str, root: str | None) -> tuple[Any, list[Finding]]:
    """The data of the record file at ``path`` (None when it does not load) and what it says about
    itself, read as validate reads it (``root``: the repository's real path, never left)."""
    if is_local(path):  # runbooks/catalogue.yaml: a team's failure modes, checked as the shipped ones
        return None, local_findings(path, shipped_entries())
    with no_collection():
        loaded = load_within(path, root)
        if loaded.findings:
            return None, loaded.findings
        return loaded.data, own_findings(path, loaded.data)


def findings(path: str, text: str, *, others: Universe | None, now: datetime, warnings: bool = True) -> list[Finding]:
    """Every finding validate would report for ``text`` as the content of ``path``, the other
    records being ``others`` (None: a new record, held to the rules that ask no other record).
    ``warnings`` False: only the rules that find errors run among the cross-record ones."""
    loaded = load_text(path, text)
    if loaded.findings:
        return loaded.findings
    found = own_findings(path, loaded.data)
    if not usable(loaded.data) or _errors(found):
        return found
    record = Record(path, loaded.data)
    if others is None:
        return found + own_rules([record], now=now)
    return found + check_all([record], others.around(record), now=now, warnings=warnings)


def _errors(found: list[Finding]) -> bool:
    return any(f.severity is Severity.ERROR for f in found)
