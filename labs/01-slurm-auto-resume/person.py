"""A person editing a run record in an editor while machines write it (lab 1's self-check)."""
from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path

from tooling.records import roundtrip
from tooling.records.load import parse_text


class Person(threading.Thread):
    """A person editing the run record in an editor while the jobs write it, every few seconds.

    Each edit is a ruamel round trip that sets ``summary`` and adds a comment line, saved as an
    editor saves: atomically, and without the record's lock, which an editor knows nothing of.
    Like an editor, it reopens and redoes the edit when the file changed on disk since it was
    opened. After each save it waits for the machines' next write and checks that the edit,
    and every earlier one, is still there.
    """

    def __init__(self, path: Path, rng: random.Random) -> None:
        super().__init__(name="person", daemon=True)
        self.path, self.pause = path, random.Random(rng.random())
        # the comments the record was made with (`tooling new-run`): every writer keeps them
        self.comments = {line for line in path.read_text().splitlines() if line.startswith("#")}
        self.edits = self.reopened = self.kept = 0
        self.problem: str | None = None
        self._finish = threading.Event()

    @staticmethod
    def note(edit: int) -> str:
        return f"# a person's note {edit}: written in an editor while the jobs ran"

    @staticmethod
    def summary(edit: int) -> str:
        return f"Edited by hand {edit} times while SLURM stopped and resumed the training."

    def run(self) -> None:
        try:
            while not self._finish.wait(self.pause.uniform(1.0, 4.0)):
                saved = self.edit(self.edits + 1)
                self.edits += 1
                self.kept += self.machines_kept(saved)
        except Exception as exc:  # said by verify_record
            self.problem = f"{type(exc).__name__}: {exc}"

    def edit(self, edit: int) -> str:
        while True:
            opened = self.path.read_text()
            document, yaml = roundtrip.load(opened)
            document["summary"] = self.summary(edit)
            document.yaml_set_comment_before_after_key("summary", before=self.note(edit)[2:])
            text = roundtrip.dump(document, yaml)
            time.sleep(0.2)  # a person's moment between opening and saving: the machines write meanwhile
            swap = self.path.with_name(f".{self.path.name}.swp")
            swap.write_text(text)
            if self.path.read_text() == opened:
                os.replace(swap, self.path)
                return text
            swap.unlink()  # "the file changed on disk since reading it": reopen and edit again
            self.reopened += 1

    def machines_kept(self, saved: str) -> bool:
        """True once a machine has written after the save and kept every edit (False: none wrote)."""
        deadline = time.monotonic() + 30
        while (text := self.path.read_text()) == saved:
            if time.monotonic() > deadline or self._finish.is_set():
                return False
            time.sleep(0.05)
        self.check(text)
        return True

    def check(self, text: str) -> None:
        """Every note so far, the last summary and the record's own comments are in ``text``."""
        lines = set(text.splitlines())
        lost = [k for k in range(1, self.edits + 1) if self.note(k) not in lines]
        summary = parse_text(str(self.path), text).data.get("summary")
        assert not lost and summary == self.summary(self.edits) and self.comments <= lines, \
            f"a machine overwrote the person's edit {self.edits} (notes lost: {lost}) or a comment:\n{text}"

    def stop(self) -> None:
        self._finish.set()
        self.join(60)
