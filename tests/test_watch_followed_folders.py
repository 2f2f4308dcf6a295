"""Issue 22: a watch poll that files a NEW incident costs the same in a repository of 15 and of 10,000.

The watch follows the record folders by the kernel's notifications (tooling/records/followed.py,
tooling/records/notify.py): after another process wrote into the incidents folder, the next poll
looks at the names told of, not at the whole folder listed again. Held here, against other
processes writing between polls, with no folder listed again where the kernel told everything:

- a record another process files, one it resolves (``tooling set``), one it reopens by a save in
  place (the same file: no sweep needed; a link's target too), one it removes, are each seen at
  the very next poll, even when the writer's clock set the file's and the folder's times back
  (times are not trusted for what changed, only the names told of);
- the next INC number follows the names told of (a higher one filed by another process; the
  highest removed);
- where the kernel's word is not complete (its queue overflowed, a sub-folder came, the folder
  moved away, its time moved with nothing told) the folder is listed again, and what changed is
  seen (after lost events, a save in place too).
tests/test_watch_followed_random.py holds it against random writers; tests/test_watch_known.py
the same watch where nothing is followed (a network file system).
"""
from __future__ import annotations

import os
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from support import tooling
from test_watch_known import add_incidents, an_open_copy, listings, scanned, written_by_another_process, xid
from tooling.records import notify
from tooling.watch import known as known_module
from tooling.watch import state as offsets
from tooling.watch.known import KnownIncidents
from tooling.watch.watcher import StallRule, Watcher

NOW = "2026-11-29T12:00:00+00:00"
DAY = 86_400 * 10 ** 9
__all__ = ["listings"]  # the fixture, used by name


class Polls:
    """A watch of the repository's run whose poll each finds one more Xid 79 of the same GPU."""

    def __init__(self, repo: Path, folder: Path) -> None:
        self.repo, self.log, self.state = repo, folder / "train.log", folder / "offsets.json"
        self.filed: list[Any] = []
        self.watcher = Watcher(root=repo, logs=[self.log], where={"run": "demo-7b", "extra": {}},
                               state=offsets.load(self.state, "demo-7b"), rule=StallRule(repo, "demo-7b", None),
                               clock=lambda: datetime.fromisoformat(NOW), emit=self.filed.append, once=True)
        self.k = 0

    def __call__(self) -> tuple[str, str, bool]:
        """What the poll filed, and whether the incidents folder was listed for it."""
        scanned()
        with open(self.log, "a") as handle:
            handle.write(xid(self.k))
        self.k += 1
        self.watcher.poll(self.state)
        return self.filed[-1].action, self.filed[-1].incident, str(self.repo / "incidents") in scanned()


@pytest.fixture
def polls(repo: Path, tmp_path: Path, listings: None) -> Iterator[Polls]:
    if not notify.local(str(repo)):
        pytest.skip("the test folder is not on a file system whose changes the kernel tells")
    add_incidents(repo, 50)  # INC-0100 ... INC-0149, resolved
    watch = Polls(repo, tmp_path)
    try:
        yield watch
    finally:
        watch.watcher.close()


def removed_by_another_process(path: Path) -> None:
    subprocess.run(["rm", str(path)], check=True)


def resolved(repo: Path, incident: str) -> None:
    result = tooling("--now", NOW, "set", incident, "status=resolved", f"resolved_at={NOW}", cwd=repo)
    assert result.returncode == 0, result.stderr


def test_records_filed_and_resolved_by_another_process_are_seen_without_listing_the_folder(polls: Polls,
                                                                                          repo: Path) -> None:
    assert polls()[:2] == ("created", "INC-0150")
    assert polls() == ("occurrence", "INC-0150", False)
    # another process files the same failure as INC-0200, its clock a day slow: the file's and
    # the folder's times set back (the folder's to what it was before, as a coarse clock leaves it)
    folder = repo / "incidents"
    before = os.stat(folder).st_mtime_ns
    written_by_another_process(folder / "INC-0200.yaml", an_open_copy(repo, "INC-0001", "INC-0200"))
    os.utime(folder / "INC-0200.yaml", ns=(before - DAY, before - DAY))
    os.utime(folder, ns=(before, before))
    assert polls() == ("occurrence", "INC-0200", False)
    resolved(repo, "INC-0200")  # INC-0150 is still open: the failure's next occurrence is its
    assert polls() == ("occurrence", "INC-0150", False)
    resolved(repo, "INC-0150")  # none open: a new incident, numbered after the highest told of
    assert polls() == ("created", "INC-0201", False)
    assert polls() == ("occurrence", "INC-0201", False)


def test_a_save_in_place_is_seen_at_the_next_poll_without_a_sweep(polls: Polls, repo: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(known_module, "RACY", 0.0)  # a file read is not read again for being recent
    assert polls()[:2] == ("created", "INC-0150")
    resolved(repo, "INC-0150")
    monkeypatch.setattr(known_module, "SWEEP", 0)  # no file looked at in turn: only what is told
    reopened = repo / "incidents" / "INC-0001.yaml"  # resolved, read at the first poll
    inode = reopened.stat().st_ino
    with open(reopened, "r+") as handle:  # an editor that saves into the same file
        handle.write(an_open_copy(repo, "INC-0001", "INC-0001"))
        handle.truncate()
    assert reopened.stat().st_ino == inode
    assert polls() == ("occurrence", "INC-0001", False)


def test_a_record_that_is_a_link_is_seen_when_its_target_changes(polls: Polls, repo: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A link's target in a folder that is not followed (no record folder): its changes are told
    nowhere the watch listens, so the link is looked at at each poll."""
    (repo / "archive").mkdir()
    target = repo / "archive" / "INC-0300.yaml"
    target.write_text((repo / "incidents" / "INC-0001.yaml").read_text().replace("INC-0001", "INC-0300"))
    (repo / "incidents" / "INC-0300.yaml").symlink_to("../archive/INC-0300.yaml")
    monkeypatch.setattr(known_module, "RACY", 0.0)  # a file read is not read again for being recent
    assert polls()[:2] == ("created", "INC-0301")
    resolved(repo, "INC-0301")
    monkeypatch.setattr(known_module, "SWEEP", 0)  # no file looked at in turn
    with open(target, "r+") as handle:  # reopened at its target, saved in place
        handle.write(an_open_copy(repo, "INC-0001", "INC-0300"))
        handle.truncate()
    assert polls() == ("occurrence", "INC-0300", False)


def test_a_removed_incident_is_forgotten(polls: Polls, repo: Path) -> None:
    assert polls()[:2] == ("created", "INC-0150")
    written_by_another_process(repo / "incidents" / "INC-0300.yaml", an_open_copy(repo, "INC-0001", "INC-0300"))
    assert polls() == ("occurrence", "INC-0300", False)
    removed_by_another_process(repo / "incidents" / "INC-0300.yaml")  # the newest open one gone: the one before it
    assert polls() == ("occurrence", "INC-0150", False)
    removed_by_another_process(repo / "incidents" / "INC-0150.yaml")  # none open, the highest gone: its number again
    assert polls() == ("created", "INC-0150", False)
    assert "occurrences" not in yaml.safe_load((repo / "incidents" / "INC-0150.yaml").read_text())  # a new one: once


def test_a_sub_folder_another_process_makes_is_listed_then_followed(polls: Polls, repo: Path) -> None:
    assert polls()[:2] == ("created", "INC-0150")
    resolved(repo, "INC-0150")
    (repo / "incidents" / "2026").mkdir()
    written_by_another_process(repo / "incidents" / "2026" / "INC-0400.yaml",
                               an_open_copy(repo, "INC-0001", "INC-0400"))
    assert polls() == ("occurrence", "INC-0400", True)  # a folder came: the listing says where it goes
    written_by_another_process(repo / "incidents" / "2026" / "INC-0400.yaml",  # resolved (a copy of INC-0001's)
                               (repo / "incidents" / "INC-0001.yaml").read_text().replace("INC-0001", "INC-0400"))
    assert polls() == ("created", "INC-0151", False)  # the highest of incidents/ itself (create_next's rule)


def test_when_the_kernel_lost_events_the_folder_is_listed_again(repo: Path, listings: None,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """And every file of it looked at once: a save in place whose event was lost is seen too."""
    try:
        queued = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    except (OSError, ValueError):
        pytest.skip("no inotify queue limit to pass")
    if not notify.local(str(repo)) or queued > 100_000:
        pytest.skip("no followed folder, or a queue too long to overflow here")
    monkeypatch.setattr(known_module, "RACY", 0.0)  # a file read is not read again for being recent
    monkeypatch.setattr(known_module, "SWEEP", 0)
    known = KnownIncidents(repo)
    try:
        assert [i.id for i in known.now()] == ["INC-0002"]
        scanned()
        marks = [repo / "incidents" / "PM-0001.yaml", repo / "incidents" / "INC-0002.yaml"]
        times = [os.stat(path).st_mtime_ns for path in marks]
        for k in range(queued + 10):  # two files in turn: events the kernel does not merge
            os.utime(marks[k % 2], ns=(times[k % 2], times[k % 2]))
        written_by_another_process(repo / "incidents" / "INC-0003.yaml", an_open_copy(repo, "INC-0001", "INC-0003"))
        reopened = an_open_copy(repo, "INC-0001", "INC-0001")
        with open(repo / "incidents" / "INC-0001.yaml", "r+") as handle:  # saved in place: no new name
            handle.write(reopened)
            handle.truncate()
        assert [i.id for i in known.now()] == ["INC-0001", "INC-0002", "INC-0003"]
        assert str(repo / "incidents") in scanned()
        # the folder's time moved (set by hand) with nothing told: listed again too
        os.utime(repo / "incidents", ns=(times[0], times[0]))
        assert [i.id for i in known.now()] == ["INC-0001", "INC-0002", "INC-0003"]
        assert str(repo / "incidents") in scanned()
        removed_by_another_process(repo / "incidents" / "INC-0003.yaml")  # and then followed again: told, not listed
        assert [i.id for i in known.now()] == ["INC-0001", "INC-0002"]
        assert str(repo / "incidents") not in scanned()
    finally:
        known.close()


def test_a_folder_moved_away_and_made_again_is_listed_then_followed(polls: Polls, repo: Path) -> None:
    assert polls()[:2] == ("created", "INC-0150")
    resolved(repo, "INC-0150")
    folder = repo / "incidents"
    subprocess.run(["mv", str(folder), str(repo / "old")], check=True)  # its watch goes with it
    subprocess.run(["cp", "-r", str(repo / "old"), str(folder)], check=True)
    written_by_another_process(folder / "INC-0160.yaml", an_open_copy(repo, "INC-0001", "INC-0160"))
    written_by_another_process(repo / "old" / "INC-0170.yaml", an_open_copy(repo, "INC-0001", "INC-0170"))
    assert polls() == ("occurrence", "INC-0160", True)  # the new folder, listed; not the old one's
    resolved(repo, "INC-0160")
    assert polls() == ("created", "INC-0161", False)  # and followed from then on
