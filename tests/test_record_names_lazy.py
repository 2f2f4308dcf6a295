"""A one-shot reader (`tooling set`, a reporter write) finds a record's files by name without
listing a folder of 10,000 incidents: a folder whose link count says it has no sub-folder (on a
file system that counts them, as the repository's root shows) is asked for each name looked up;
one with a sub-folder, or asked for all its records, is listed. The answers are a listing's."""
from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from tooling.records.lookup import RecordNames, _links_counted

_recording = False
_listed: list[str] = []


@pytest.fixture
def scans() -> Iterator[list[str]]:
    """The folders os.scandir lists while the test runs (an audit hook: the real calls)."""
    global _recording
    if not getattr(sys, "_record_names_lazy_hook", False):  # one hook a process: it cannot be removed
        sys.addaudithook(lambda event, args: _listed.append(str(args[0])) if _recording and event == "os.scandir"
                         else None)
        sys._record_names_lazy_hook = True  # type: ignore[attr-defined]
    _listed.clear()
    _recording = True
    try:
        yield _listed
    finally:
        _recording = False


def answers(names: RecordNames) -> list[Any]:
    return [names.files("INC-0001"), names.files("demo-7b"), names.files("INC-0999"), names.files("ladder-hang"),
            names.within("incidents"), names.within("runbooks/ladders")]


def test_a_lazy_reader_finds_by_name_without_listing_a_folder_without_sub_folders(repo: Path,
                                                                                  scans: list[str]) -> None:
    if _links_counted(repo) is None:
        pytest.skip("this file system does not count a folder's sub-folders in its link count")
    (repo / "incidents" / "demo-7b.yaml").write_text("kind: run\n")  # a run's file in the wrong folder: found too
    lazy = RecordNames(repo, lazy=True)
    assert lazy.files("INC-0001") == [str(repo / "incidents" / "INC-0001.yaml")]
    assert str(repo / "incidents") not in scans
    assert answers(lazy) == answers(RecordNames(repo))
    assert scans.count(str(repo / "incidents")) == 2  # listed for within("incidents"), and by the eager one


def test_a_folder_with_a_sub_folder_is_listed(repo: Path, scans: list[str]) -> None:
    (repo / "incidents" / "2025").mkdir()
    (repo / "incidents" / "2025" / "INC-0999.yaml").write_text("kind: incident\n")
    lazy = RecordNames(repo, lazy=True)
    assert lazy.files("INC-0999") == [str(repo / "incidents" / "2025" / "INC-0999.yaml")]
    assert str(repo / "incidents") in scans
    assert answers(lazy) == answers(RecordNames(repo))


def test_a_file_system_that_does_not_count_sub_folders_is_listed(repo: Path, scans: list[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.stat

    class OneLink:  # btrfs, overlayfs: a folder has 1 link whatever it holds
        def __init__(self, info: os.stat_result) -> None:
            self.info = info

        def __getattr__(self, name: str) -> Any:
            return 1 if name == "st_nlink" else getattr(self.info, name)

    def one_link(path: Any, *args: Any, **kwargs: Any) -> Any:
        info = real(path, *args, **kwargs)
        return OneLink(info) if stat.S_ISDIR(info.st_mode) else info

    monkeypatch.setattr(os, "stat", one_link)
    lazy = RecordNames(repo, lazy=True)
    assert lazy.files("INC-0001") == [str(repo / "incidents" / "INC-0001.yaml")]
    assert str(repo / "incidents") in scans


def test_a_folder_removed_before_its_records_are_asked_for_holds_none(repo: Path) -> None:
    """Another process removed it between the lookup by name and the listing: no records, no error."""
    if _links_counted(repo) is None:
        pytest.skip("this file system does not count a folder's sub-folders in its link count")
    lazy = RecordNames(repo, lazy=True)
    assert lazy.files("INC-0001") == [str(repo / "incidents" / "INC-0001.yaml")]
    for path in (repo / "incidents").iterdir():
        path.unlink()
    (repo / "incidents").rmdir()
    assert lazy.within("incidents") == []
