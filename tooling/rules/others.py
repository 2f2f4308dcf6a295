"""The other records the cross-record rules consult: every record at once, or only those a write names.

The rules (:mod:`tooling.rules.crossref`) ask an :class:`Others` six questions: the ``kind``
record with an id (references, repeat_of loops, a draft's incidents, an overlay's English record),
the records sharing a file name (duplicate ids), whether a file loaded as a record, the files
whose own errors are shown, and, for the rules that count over the whole set (a symptom without
a ladder), every record of a kind, or first those of the kind's folder.

``tooling validate`` checks many records against all of them: :class:`RecordIndex` (and
:class:`Listed`, for a write given every record). A write (``tooling set``, the reporter, a
watch) checks one record: :class:`Repository` answers from the files named like the ids asked
for (a record's file name is its id: one walk of the folders' names,
:class:`~tooling.records.lookup.RecordNames`), reads the files of a kind's folder for the
records of that folder (the ladders of ``runbooks/ladders/``: when they serve the symptom of the
incident edited, no other file can make it a warning), and loads every record only for what
only every record can answer (a symptom those ladders do not serve). Its answers are the index's
for every repository whose records are named by their ids; a file whose id is not its name (an
id-mismatch error of its own, which validate reports) is found only by that name.
"""
from __future__ import annotations

import os
from collections import defaultdict
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Protocol

from tooling.catalogue.local import is_local
from tooling.records.kinds import KINDS, is_kind
from tooling.records.layout import repository_files
from tooling.records.load import load_within
from tooling.records.lookup import RecordNames
from tooling.records.model import Record


def usable(data: Any) -> bool:
    """Enough of a record to be referred to: a known kind and an id."""
    return isinstance(data, dict) and is_kind(data.get("kind")) and isinstance(data.get("id"), str)


def file_name(record: Record) -> str:
    """What the file name says: the id; an overlay's also says its language (crash.ko.yaml)."""
    if KINDS[record.kind].translates is None:
        return record.id
    return f"{record.id}.{record.get('lang')}"


class Others(Protocol):
    shown: set[str]  # absolute paths of files that did not load, whose own errors are reported

    def named(self, kind: str, record_id: Any) -> Record | None:
        """The ``kind`` record ``record_id`` (the first of the files that claim it), or None."""

    def sharing(self, kind: str, name: str) -> list[str]:
        """Paths of the ``kind`` records whose file name (:func:`file_name`) is ``name``."""

    def loaded(self, path: str) -> bool:
        """Whether the file at absolute ``path`` is a record of the repository that loaded."""

    def every(self, kind: str) -> dict[str, Record]:
        """Every ``kind`` record by id."""

    def in_folder(self, kind: str) -> dict[str, Record]:
        """The ``kind`` records of the kind's folder (and the shipped ones of it) by id, at least:
        some of :meth:`every`'s, read without reading every record (an index has them all)."""


class RecordIndex:
    """Every record by kind and id, for resolving references."""

    def __init__(self, records: Iterable[Record], shown: Iterable[str] = ()) -> None:
        self.by_kind: dict[str, dict[str, Record]] = defaultdict(dict)
        self.paths: dict[tuple[str, str], list[str]] = defaultdict(list)
        self._given: list[str] = []
        for record in records:
            self.by_kind[record.kind].setdefault(record.id, record)
            self.paths[(record.kind, file_name(record))].append(record.path)
            self._given.append(record.path)
        self.shown = {os.path.abspath(p) for p in shown}

    @cached_property
    def files(self) -> set[str]:
        """The absolute paths of the records: asked only of a reference that does not resolve, so
        made then (an absolute path per record was a tenth of the cross-record rules' time)."""
        return {os.path.abspath(p) for p in self._given}

    def named(self, kind: str, record_id: Any) -> Record | None:
        return self.by_kind.get(kind, {}).get(record_id) if isinstance(record_id, str) else None

    def sharing(self, kind: str, name: str) -> list[str]:
        return self.paths.get((kind, name), [])

    def loaded(self, path: str) -> bool:
        return path in self.files

    def every(self, kind: str) -> dict[str, Record]:
        return self.by_kind.get(kind, {})

    def in_folder(self, kind: str) -> dict[str, Record]:
        return self.every(kind)


class Listed:
    """Every record of the repository, loaded already (``tooling set``, ``review``)."""

    def __init__(self, records: Iterable[Record]) -> None:
        self.records = list(records)

    def around(self, record: Record) -> Others:
        """The index of the other records (those of other files) and ``record``."""
        own = os.path.abspath(record.path)
        return RecordIndex([*(r for r in self.records if os.path.abspath(r.path) != own), record])


class Repository:
    """The records of the repository at ``root``, read as a write's rules ask for them: the
    other side of one record's check (:meth:`around`). Each file is read once, by name.
    ``names``: the folders' names as the caller listed them already."""

    def __init__(self, root: Path, *, names: RecordNames | None = None) -> None:
        self.root = root
        # a watch's, listed again where changed at its poll; else one that lists only what it must
        self.names = names or RecordNames(root, lazy=True)
        self._real = os.path.realpath(root)
        self._read: dict[str, Record | None] = {}

    def record(self, path: str) -> Record | None:
        """The record in the file at ``path`` if it loads as one (as validate loads it), else None."""
        if path not in self._read:
            # a team's failure modes (runbooks/catalogue.yaml) are read as a catalogue, never as a record
            data = None if is_local(path) else load_within(path, self._real).data
            self._read[path] = Record(path, data) if usable(data) else None
        return self._read[path]

    def around(self, record: Record) -> Others:
        """The other records as seen by ``record``, the new text of the file at its path."""
        return _Around(self, record)


class _Around:
    """:class:`Others` for one record of a :class:`Repository`: the repository's other files,
    then the record itself, in the order a :class:`RecordIndex` of ``[*others, record]`` has them."""

    def __init__(self, repository: Repository, record: Record) -> None:
        self.repository, self.record = repository, record
        self.own = os.path.abspath(record.path)
        self.shown: set[str] = set()
        self._all: RecordIndex | None = None
        self._near: dict[str, RecordIndex] = {}  # by the folder read

    def _with(self, stem: str) -> list[Record]:
        """The other records in files named ``stem``, then the record itself."""
        return self._others(self.repository.names.files(stem))

    def named(self, kind: str, record_id: Any) -> Record | None:
        if not isinstance(record_id, str) or not is_kind(kind):
            return None
        if KINDS[kind].translates is not None:  # named <id>.<lang>: not found by the id alone
            return self.every(kind).get(record_id)
        return next((r for r in self._with(record_id) if r.kind == kind and r.id == record_id), None)

    def sharing(self, kind: str, name: str) -> list[str]:
        return [r.path for r in self._with(name) if r.kind == kind and file_name(r) == name]

    def loaded(self, path: str) -> bool:
        if path == self.own:
            return True
        stem = os.path.basename(path).rsplit(".", 1)[0]
        listed = any(os.path.abspath(p) == path for p in self.repository.names.files(stem))
        return listed and self.repository.record(path) is not None

    def every(self, kind: str) -> dict[str, Record]:
        if self._all is None:  # a rule that counts over the whole set: every record, as validate has them
            self._all = RecordIndex(self._others(repository_files(self.repository.root)))
        return self._all.every(kind)

    def in_folder(self, kind: str) -> dict[str, Record]:
        folder = KINDS[kind].directory
        if self._all is not None:  # read already
            return self._all.every(kind)
        if folder not in self._near:
            self._near[folder] = RecordIndex(self._others(self.repository.names.within(folder)))
        return self._near[folder].every(kind)

    def _others(self, paths: list[str]) -> list[Record]:
        """The records in the files at ``paths`` but the record's own, then the record itself."""
        return [*(r for p in paths if os.path.abspath(p) != self.own and (r := self.repository.record(p)) is not None),
                self.record]
