"""Allocating the next free record id without ever overwriting a file."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable

from tooling.errors import UserError
from tooling.fs.atomic import create_file
from tooling.fs.lock import LockTimeout, locked
from tooling.records.findings import shown_path
from tooling.records.layout import highest_numbered

MAX_ATTEMPTS = 10_000
HOLD_SECONDS = 60.0  # waited for another writer of the folder: a poll filing a backlog takes seconds


def highest_number(directory: Path, prefix: str) -> int:
    return highest_numbered(os.listdir(directory), prefix)


def format_id(prefix: str, number: int) -> str:
    return f"{prefix}{number:04d}"


def make_folder(directory: Path) -> None:
    """The records folder, made if missing. Something else under its name or a parent's (a
    file, a link to nothing, a loop of links) is said as such, not as mkdir's 'file exists'."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        return
    except (FileExistsError, NotADirectoryError):
        pass
    # the nearest of the folder and its parents that is there but is not a folder
    blocking = next((p for p in (directory, *directory.parents) if os.path.lexists(p) and not p.is_dir()), directory)
    if not blocking.is_symlink():
        what = "a file"
    else:
        try:
            what = f"a symbolic link to {os.path.realpath(blocking, strict=True)}, not a folder"
        except FileNotFoundError:
            what = f"a symbolic link to {os.readlink(blocking)}, which does not exist"
        except OSError:
            what = "a symbolic link that leads round in a loop"
    folder = "the folder" if blocking == directory else f"a folder holding {shown_path(directory)}/, the folder"
    raise UserError(f"{shown_path(blocking)}: {what}; expected {folder} the records go in (move it away "
                    "or make it a folder)")


@contextmanager
def folder_for(directory: Path) -> Iterator[None]:
    """:func:`make_folder`, and the folder it made removed again, when empty, if what was to be
    written into it failed (a full disk at a repository's first incident): nothing left behind."""
    made = not directory.is_dir()
    make_folder(directory)
    try:
        yield
    except BaseException:
        if made:
            try:
                directory.rmdir()
            except OSError:  # another writer's record is in it meanwhile, or it went: theirs
                pass
        raise


@contextmanager
def held_folder(directory: Path, *, timeout: float = HOLD_SECONDS) -> Iterator[None]:
    """The records folder (made if missing, as :func:`folder_for`) held by one writer at a time,
    for a writer that decides from what the folder holds what to write into it (a watch: the open
    incident of a failure, or a new one). A flock of the folder itself: no lock file among the
    records, and a holder killed (SIGKILL) releases it with its death."""
    while True:
        with folder_for(directory), ExitStack() as stack:
            try:
                stack.enter_context(locked(directory, timeout=timeout))
            except LockTimeout:
                raise UserError(f"{shown_path(directory)}: another writer held the folder's lock for {timeout:g} s; "
                                "expected it to file what it found within that (run the command again)") from None
            except FileNotFoundError:  # removed while waited for (its first record failed): made again
                continue
            yield
            return


def create_next(directory: Path, prefix: str, render: Callable[[str], str], *,
                taken: int | None = None) -> tuple[str, Path]:
    """Write ``render(id)`` under the next free ``<prefix>NNNN.yaml``; return the id and path.

    Concurrent callers each compute the next number; link(2) lets exactly one of them take a
    name, and the losers move on to a higher number instead of overwriting. ``taken``: the
    highest number the caller's own listing of the folder shows (a watch's, refreshed at its
    poll): tried first without listing the folder (a few ms at 10,000 names); a name taken
    meanwhile fails the link, and the folder is listed as without it.
    """
    tried = 0
    with folder_for(directory):
        for attempt in range(MAX_ATTEMPTS):
            listed = taken if attempt == 0 and taken is not None else highest_number(directory, prefix)
            number = max(listed + 1, tried + 1)
            record_id = format_id(prefix, number)
            path = directory / f"{record_id}.yaml"
            try:
                create_file(path, render(record_id))
                return record_id, path
            except FileExistsError:
                tried = number
    raise UserError(f"{directory}: could not allocate a new {prefix} id after {MAX_ATTEMPTS} attempts")
