"""Finding a repository's record files by name, without reading the others.

A record file's name is its id (an overlay's is ``<id>.<lang>``), so the files that may hold the
record ``X`` are those named ``X.yaml`` or ``X.yml`` anywhere under the record folders: one walk
of the folders' names (no file is opened) answers that for any number of ids. A write checks its
one record against the few files its rules name this way (:mod:`tooling.rules.others`) instead of
loading every record of the repository. Reading a file found so is :func:`load_within`: the same
reading as ``tooling validate``'s, which never follows a link out of the repository.
"""
from __future__ import annotations

import os
from pathlib import Path

from tooling.records.findings import Finding
from tooling.records.kinds import RECORD_DIRS
from tooling.records.layout import SUFFIXES, shipped_records
from tooling.records.load import Loaded, load_file


class RecordNames:
    """The names under the record folders of ``root`` and of the shipped records it reads,
    listed once (taken when first asked)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._folders: list[tuple[str, set[str]]] | None = None  # (folder, names in it), in walk order

    def _listing(self) -> list[tuple[str, set[str]]]:
        if self._folders is None:
            self._folders = []
            for top in RECORD_DIRS:  # walked as tooling.records.layout.record_files walks them
                if not (self.root / top).is_dir():
                    continue
                for parent, dirs, names in os.walk(self.root / top):
                    dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                    self._folders.append((parent, {*names, *dirs}))
            # the shipped ladders and stack it does not override, listed after its own as
            # repository_files lists them
            for path in shipped_records(self.root):
                self._folders.append((str(path.parent), {path.name}))
        return self._folders

    def files(self, stem: str) -> list[str]:
        """The record files named ``stem`` plus a record suffix, in the order
        :func:`~tooling.records.layout.repository_files` lists them."""
        if not stem or stem.startswith("."):
            return []
        wanted = sorted(stem + suffix for suffix in SUFFIXES)
        return [os.path.join(parent, name) for parent, names in self._listing() for name in wanted if name in names]


def outside(path: str, root: str | None) -> bool:
    """A symbolic link that leads out of the repository (``root``, real): never read, never echoed.
    (A link to nothing leads nowhere: reading says so.)"""
    if root is None or not os.path.islink(path) or not os.path.exists(path):
        return False
    real = os.path.realpath(path)
    return os.path.commonpath([real, root]) != root


def load_within(path: str, root: str | None) -> Loaded:
    """The file at ``path`` as validate reads it: refused when it is a link out of ``root`` (the
    repository's real path; None: anywhere)."""
    if outside(path, root):
        return Loaded(path, findings=[Finding(path, 1, 1, "outside-repository", "symbolic link to a file outside "
                                              "the repository; expected the record itself")])
    return load_file(path)
