"""Issue 22: a watch that follows the record folders knows what random writers leave between its polls.

Batches of creates, replaces, saves in place, removals, moves between folders, sub-folders made,
renamed and removed, between polls of :class:`tooling.watch.known.KnownIncidents`: after each
batch the open incidents it knows are those the files say. Every write changes the file's size,
and a file read is trusted at once (RACY 0) with no sweep: no racy re-read and no file looked at
in turn hides a change the kernel's word missed. Written by this process, for speed: the kernel
tells every process's writes alike (tests/test_watch_followed_folders.py writes from others).
"""
from __future__ import annotations

import itertools
import os
import random
import re
import shutil
from pathlib import Path

import pytest

from test_watch_known import an_open_copy
from tooling.records import notify
from tooling.watch import known as known_module
from tooling.watch.known import KnownIncidents


def replaced(path: Path, text: str) -> None:
    """``path`` written as tooling writes it: a temporary file renamed over the name."""
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text(text)
    os.replace(temp, path)


def open_ids(folder: Path) -> list[str]:
    """The ids of the open incidents under ``folder``, read from the files as they are now."""
    found = []
    for path in folder.rglob("*.yaml"):
        text = path.read_text()
        if re.search(r"^kind: incident$", text, re.M) and not re.search(r"^status: resolved$", text, re.M):
            found.append(re.search(r"^id: (\S+)$", text, re.M).group(1))  # type: ignore[union-attr]
    return sorted(found)


class Writers:
    """Random writes under the incidents folder of ``repo``."""

    def __init__(self, repo: Path, seed: int) -> None:
        self.folder, self.rng = repo / "incidents", random.Random(seed)
        self.texts = ((self.folder / "INC-0001.yaml").read_text(), an_open_copy(repo, "INC-0001", "INC-0001"))
        self.folders, self.writes = [self.folder], itertools.count()

    def text(self, path: Path) -> str:
        """A record for ``path`` (its id its name's), open or resolved, of a length no write had."""
        return self.texts[self.rng.random() < 0.5].replace("INC-0001", path.stem) + "#" * next(self.writes) + "\n"

    def batch(self) -> None:
        rng = self.rng
        for _ in range(rng.randint(1, 5)):
            files = sorted(self.folder.rglob("INC-*.yaml"))
            op = rng.choice(["create", "replace", "in place", "remove", "move", "folder", "rename folder",
                             "remove folder"] if files else ["create"])
            below = self.folders[1:]
            if op == "folder" and len(self.folders) < 4:
                self.folders.append(self.folder / f"part{next(self.writes)}")
                self.folders[-1].mkdir()
            elif op == "rename folder" and below:
                index = rng.randrange(1, len(self.folders))
                self.folders[index] = self.folders[index].rename(self.folder / f"moved{next(self.writes)}")
            elif op == "remove folder" and below:
                shutil.rmtree(self.folders.pop(rng.randrange(1, len(self.folders))))
            elif op in ("create", "folder"):
                path = rng.choice(self.folders) / f"INC-{rng.randint(2000, 2999):04d}.yaml"
                replaced(path, self.text(path))
            elif op == "replace":
                replaced(path := rng.choice(files), self.text(path))
            elif op == "in place":
                with open(path := rng.choice(files), "r+") as handle:
                    handle.write(self.text(path))
                    handle.truncate()
            elif op == "remove":
                os.remove(rng.choice(files))
            elif op == "move":
                source = rng.choice(files)
                os.replace(source, rng.choice(self.folders) / source.name)


# each has a save in place in a batch whose folder was listed again (a sub-folder came or went),
# which a listing alone does not show
@pytest.mark.parametrize("seed", [2, 4, 5, 7])
def test_what_random_writers_leave_between_polls_is_what_the_watch_knows(repo: Path, seed: int,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    if not notify.local(str(repo)):
        pytest.skip("the test folder is not on a file system whose changes the kernel tells")
    monkeypatch.setattr(known_module, "RACY", 0.0)
    monkeypatch.setattr(known_module, "SWEEP", 0)
    writers, known = Writers(repo, seed), KnownIncidents(repo)
    try:
        for _ in range(40):
            writers.batch()
            assert sorted(i.id for i in known.now()) == open_ids(repo / "incidents")
        assert known._followed(str(repo / "incidents"))  # the folder was followed, not listed at each poll
    finally:
        known.close()
