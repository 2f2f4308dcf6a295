"""Issue 22, item 2: a watch poll that files a failure costs the same in a repository of 15 incidents and of 10,000.

A running watch knows the incidents from its first poll that files something
(:class:`tooling.watch.known.KnownIncidents`) and then looks only at what may have changed: one
stat a record folder, each folder listed again only when its time moved, the files it shows added
or replaced, the open incidents, and the other files in turn, a thousand a second. Held here,
against records written by other processes between polls:

- a folder whose time did not move is not listed again, nor its unchanged files looked at;
- a write within the tick of the folder's listing, which leaves the folder's time as it was on a
  file system with coarse times (a second; two on FAT), is seen at the next poll: a folder changed
  within RACY seconds of its listing is listed again;
- a newer open incident of the same failure, filed by another process, gets the next occurrence;
  an incident reopened by a save in place (the same file) is noticed by the sweep.

All of it as on a file system whose changes the kernel does not tell (a network one: the folders
are not followed, see tooling/records/followed.py); tests/test_watch_followed_folders.py holds the
same against followed folders.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

import pytest

from support import tooling
from tooling.records import notify
from tooling.watch import known as known_module
from tooling.watch import state as offsets
from tooling.watch.known import RACY, KnownIncidents
from tooling.watch.watcher import StallRule, Watcher

NOW = "2026-11-29T12:00:00+00:00"
SECOND = 10 ** 9
# another process writes a record as tooling does: a temporary file, then a rename over the name
WRITE = ("import os, sys; temp = os.path.join(os.path.dirname(sys.argv[1]), '.' + os.path.basename(sys.argv[1]) "
         "+ '.tmp'); open(temp, 'w').write(sys.argv[2]); os.replace(temp, sys.argv[1])")


def written_by_another_process(path: Path, text: str) -> None:
    subprocess.run([sys.executable, "-c", WRITE, str(path), text], check=True)


def add_incidents(root: Path, count: int) -> None:
    """``count`` more resolved incidents, copies of INC-0001 under their own ids (INC-0100...)."""
    text = (root / "incidents" / "INC-0001.yaml").read_text()
    for number in range(100, 100 + count):
        (root / "incidents" / f"INC-{number:04d}.yaml").write_text(text.replace("INC-0001", f"INC-{number:04d}"))


def an_open_copy(root: Path, of: str, as_id: str) -> str:
    """The text of incident ``of``, open, under the id ``as_id``."""
    text = (root / "incidents" / f"{of}.yaml").read_text().replace(of, as_id)
    return "".join(line for line in text.replace("status: resolved", "status: investigating").splitlines(True)
                   if not line.startswith("resolved_at:"))


@pytest.fixture(autouse=True)
def unfollowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """No file system is taken as local: as on NFS, no folder is followed by its notifications."""
    monkeypatch.setattr(notify, "LOCAL", frozenset())


_recording = False
_events: list[tuple[str, Any]] = []


@pytest.fixture
def listings() -> Iterator[None]:
    """The folders os.scandir lists, seen by an audit hook (the real calls) while the test runs."""
    global _recording
    if not getattr(sys, "_watch_known_hook", False):  # one hook a process: a hook cannot be removed
        sys.addaudithook(lambda event, args: _events.append((event, args)) if _recording else None)
        sys._watch_known_hook = True  # type: ignore[attr-defined]
    _events.clear()
    _recording = True
    try:
        yield
    finally:
        _recording = False


def scanned() -> list[str]:
    """The folders listed since the last call."""
    found = [str(args[0]) for event, args in _events if event == "os.scandir"]
    _events.clear()
    return found


@pytest.mark.slow  # ~3 s: waits for the records to be older than the watch's racy interval
def test_a_folder_whose_time_did_not_move_is_not_listed_again(repo: Path, listings: None,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    add_incidents(repo, 50)
    time.sleep(RACY)  # every folder and file changed before RACY seconds: a later change moves its time
    stats: list[str] = []
    real_stat = os.stat
    monkeypatch.setattr(known_module, "SWEEP", 10)  # ten files a second in turn: a few in a poll
    # the sweep's clock, a poll 0.2 s after the one before: on a busy machine the other process's
    # write below took over a second, and the sweep took the files of that second too
    clock = [time.monotonic()]
    monkeypatch.setattr(known_module, "time", SimpleNamespace(time=time.time, monotonic=lambda: clock[0]))

    def counted_stat(path: Any, *args: Any, **kwargs: Any) -> Any:
        if str(path).startswith(str(repo)) and str(path).endswith(".yaml"):  # a record file's
            stats.append(str(path))
        return real_stat(path, *args, **kwargs)

    known = KnownIncidents(repo)
    scanned()
    assert [i.id for i in known.now()] == ["INC-0002"]  # the one open incident of 53
    assert len(scanned()) == 4  # incidents, runbooks, runbooks/ladders, runbooks/runs
    monkeypatch.setattr(os, "stat", counted_stat)
    time.sleep(0.1)
    clock[0] += 0.2
    assert [i.id for i in known.now()] == ["INC-0002"]
    assert scanned() == []
    # the open incident, and about one file of the sweep (ten a second): not the 55 record files
    assert str(repo / "incidents" / "INC-0002.yaml") in stats and len(stats) <= 10, stats
    stats.clear()
    written_by_another_process(repo / "incidents" / "INC-0200.yaml", an_open_copy(repo, "INC-0001", "INC-0200"))
    clock[0] += 0.2
    assert [i.id for i in known.now()] == ["INC-0002", "INC-0200"]
    assert scanned() == [str(repo / "incidents")]  # only the folder whose time moved
    assert str(repo / "incidents" / "INC-0200.yaml") in stats and len(stats) <= 10, stats


def test_a_write_within_the_tick_of_the_folders_listing_is_seen(repo: Path, listings: None) -> None:
    """A file system whose times are whole seconds (ext3, HFS+, many NFS servers; FAT: two) gives a
    folder changed twice within a second the same time: emulated by setting the folder's time back
    to the second it was listed in, after another process wrote into it."""
    folder = repo / "incidents"
    known = KnownIncidents(repo)
    for _ in range(5):  # a machine so loaded that the listing came RACY seconds after the tick: again
        tick = time.time_ns() // SECOND * SECOND  # the second we are in, as such a file system has it
        os.utime(folder, ns=(tick, tick))
        assert [i.id for i in known.now()] == ["INC-0002"]
        if time.time_ns() - tick < RACY * SECOND:
            break
    else:
        pytest.skip("the listing never came within RACY seconds of the folder's tick")
    written_by_another_process(folder / "INC-0003.yaml", an_open_copy(repo, "INC-0001", "INC-0003"))
    os.utime(folder, ns=(tick, tick))  # the same tick: the folder's time did not move
    assert os.stat(folder).st_mtime_ns == tick
    assert [i.id for i in known.now()] == ["INC-0002", "INC-0003"]
    assert str(folder) in scanned()  # listed again, for having changed within RACY of its listing


def xid(k: int) -> str:
    return (f"[{812345.678934 + 120 * k:.6f}] NVRM: Xid (PCI:0000:ca:00): 79, pid=4242, name=python3, "
            "GPU has fallen off the bus.\n")


def test_the_watchs_own_writes_do_not_make_it_list_the_folder_again(repo: Path, tmp_path: Path,
                                                                    listings: None) -> None:
    """A poll that files moves the folder's time by its own write: the next poll does not list the
    folder for it (RecordNames.wrote); a write of another process after it does."""
    add_incidents(repo, 20)
    log, state = tmp_path / "train.log", tmp_path / "offsets.json"
    filed: list[Any] = []
    watcher = Watcher(root=repo, logs=[log], where={"run": "demo-7b", "extra": {}},
                      state=offsets.load(state, "demo-7b"), rule=StallRule(repo, "demo-7b", None),
                      clock=lambda: datetime.fromisoformat(NOW), emit=filed.append, once=True)

    def poll(k: int) -> tuple[str, str, list[str]]:
        scanned()
        with open(log, "a") as handle:
            handle.write(xid(k))
        watcher.poll(state)
        return filed[-1].action, filed[-1].incident, [p for p in scanned() if p == str(repo / "incidents")]

    try:
        assert poll(0)[:2] == ("created", "INC-0120")
        assert poll(1) == ("occurrence", "INC-0120", [])
        assert poll(2) == ("occurrence", "INC-0120", [])
        written_by_another_process(repo / "incidents" / "INC-0200.yaml", an_open_copy(repo, "INC-0001", "INC-0200"))
        assert poll(3) == ("occurrence", "INC-0200", [str(repo / "incidents")])
        assert poll(4) == ("occurrence", "INC-0200", [])
    finally:
        watcher.close()


@pytest.mark.slow  # ~5 s: waits for the incidents to be older than the watch's racy interval
def test_records_written_by_other_processes_between_polls_are_filed_against(repo: Path, tmp_path: Path) -> None:
    add_incidents(repo, 300)
    time.sleep(RACY)  # as a repository's files are: none changed within RACY seconds of the watch's reading
    log, state = tmp_path / "train.log", tmp_path / "offsets.json"
    clock = datetime.fromisoformat(NOW)
    filed: list[Any] = []
    watcher = Watcher(root=repo, logs=[log], where={"run": "demo-7b", "extra": {}},
                      state=offsets.load(state, "demo-7b"), rule=StallRule(repo, "demo-7b", None),
                      clock=lambda: clock, emit=filed.append, once=True)

    def poll(k: int) -> tuple[str, str]:
        with open(log, "a") as handle:
            handle.write(xid(k))
        watcher.poll(state)
        return filed[-1].action, filed[-1].incident

    try:
        assert poll(0) == ("created", "INC-0400")
        # a person files the same failure again, by hand, from another process: the newest open one
        written_by_another_process(repo / "incidents" / "INC-0401.yaml", an_open_copy(repo, "INC-0001", "INC-0401"))
        assert poll(1) == ("occurrence", "INC-0401")
        # both resolved with tooling set (each file replaced by a rename)
        for incident in ("INC-0400", "INC-0401"):
            result = tooling("--now", NOW, "set", incident, "status=resolved", f"resolved_at={NOW}", cwd=repo)
            assert result.returncode == 0, result.stderr
        assert poll(2) == ("created", "INC-0402")
        assert tooling("--now", NOW, "set", "INC-0402", "status=resolved", f"resolved_at={NOW}",
                       cwd=repo).returncode == 0
        # INC-0001 (resolved, read at the first poll) reopened by an editor that saves into the same
        # file: its folder's time does not move; the sweep (a thousand files a second) comes to it
        # within a third of a second
        reopened = repo / "incidents" / "INC-0001.yaml"
        text, inode = an_open_copy(repo, "INC-0001", "INC-0001"), reopened.stat().st_ino
        with open(reopened, "r+") as handle:
            handle.write(text)
            handle.truncate()
        assert reopened.stat().st_ino == inode
        time.sleep(0.5)
        assert poll(3) == ("occurrence", "INC-0001")
    finally:
        watcher.close()
