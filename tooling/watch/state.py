"""The offset file of ``tooling watch``: where each log was read to, so that a restart goes on there.

JSON, replaced atomically (:func:`tooling.fs.atomic.replace_file`) after every poll, once the
poll's incidents are written: a watch stopped by a signal resumes exactly where it stopped, no
line read twice and none skipped. (Killed between writing an incident and its offsets, it reads
that poll's lines again: at least once, never lost.) One watch per offset file, held by a lock
beside it. The format, version 1::

    {"version": 1, "where": "run demo-7b",
     "logs": {"/abs/path/train.log": {"lines": 1204, "files": [
         {"dev": 2049, "inode": 131, "offset": 88412, "line": 1205, "head": "<sha256, 32 hex>",
          "head_bytes": 1024}]}},
     "progress": {"at": "2026-11-29T12:00:00+00:00", "log": "train.log", "line": 1200,
                  "text": "step 1200 | loss 2.31"},
     "hang_raised": false}

``files`` lists the files of the log name oldest first: rotated files still read to their end,
then the one the name holds (``line`` is the number of the line that starts at ``offset``);
``lines`` counts every line read from the name, all files together.
"""
from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from tooling.errors import UserError
from tooling.fs.atomic import replace_file
from tooling.fs.lock import holder, try_hold
from tooling.watch.files import Position
from tooling.watch.progress import Progress, Stall

VERSION = 1
RULE = "watch-offsets"


@dataclass
class LogOffsets:
    files: list[Position] = field(default_factory=list)
    lines: int = 0


@dataclass
class WatchState:
    where: str  # "run demo-7b" or "cluster rsc-1": whose incidents the offsets led to
    logs: dict[str, LogOffsets] = field(default_factory=dict)  # by absolute path
    stall: Stall = field(default_factory=Stall)


def default_path(root: Path, where: str, logs: list[Path]) -> Path:
    """One offset file per repository, run (or cluster) and set of logs, in the user's state folder."""
    home = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    key = json.dumps([str(root.resolve()), where, sorted(str(p.absolute()) for p in logs)])
    return Path(home) / "tooling" / "watch" / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"


def load(path: Path, where: str) -> WatchState:
    """The offsets saved at ``path``; none yet when it does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return WatchState(where)
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: could not be read ({getattr(exc, 'strerror', None) or exc}); expected the "
                        "offset file tooling watch writes") from None
    try:
        state = _state(json.loads(text))
    except json.JSONDecodeError as exc:
        raise _broken(path, f"{exc.msg}", exc.lineno, exc.colno) from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _broken(path, f"unexpected content: {exc}", 1, 1) from None
    if state.where != where:
        raise UserError(f"{path}: the offsets of a watch for {state.where}; expected those of a watch for {where} "
                        "(give this one its own --state FILE)")
    return state


def _broken(path: Path, what: str, line: int, col: int) -> UserError:
    return UserError(f"{path}:{line}:{col}: [{RULE}] not an offset file of tooling watch ({what}); expected the "
                     "JSON tooling watch writes (remove the file to read the logs from their start)")


def _state(data: dict[str, Any]) -> WatchState:
    if data["version"] != VERSION:
        raise ValueError(f"version {data['version']!r}, expected {VERSION}")
    logs = {str(name): LogOffsets([Position(**{k: f[k] for k in Position.__dataclass_fields__}) for f in log["files"]],
                                  int(log["lines"])) for name, log in data["logs"].items()}
    last = data["progress"]
    progress = Progress(datetime.fromisoformat(last["at"]), str(last["log"]), int(last["line"]),
                        str(last["text"])) if last is not None else None
    return WatchState(str(data["where"]), logs, Stall(progress, bool(data["hang_raised"])))


def save(path: Path, state: WatchState) -> None:
    last = state.stall.last
    data = {"version": VERSION, "where": state.where,
            "logs": {name: {"lines": log.lines, "files": [asdict(p) for p in log.files]} for name, log in state.logs.items()},
            "progress": {"at": last.at.isoformat(), "log": last.log, "line": last.line, "text": last.text} if last else None,
            "hang_raised": state.stall.raised}
    replace_file(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


@contextmanager
def held(path: Path) -> Iterator[None]:
    """Hold the offset file's lock (``FILE.lock`` beside it) for as long as the watch runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_name(path.name + ".lock")
    fd = try_hold(lock)
    if fd is None:
        raise UserError(f"{path}: in use by another tooling watch (pid {holder(lock)}); expected one watch per "
                        "offset file (stop that one, or give this one its own --state FILE)")
    try:
        yield
    finally:
        os.close(fd)
