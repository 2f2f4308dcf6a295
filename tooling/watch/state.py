"""The offset file of ``tooling watch``: where each log was read to, so that a restart goes on there.

JSON, replaced atomically (:func:`tooling.fs.atomic.replace_file`) after every poll: a watch
stopped resumes exactly where it stopped, no line read twice and none skipped. A poll that files
something writes it twice: first as a journal, the poll's new offsets with the failures still
to file (``pending``), then, once they are filed, without them. Each incident the poll writes
carries the poll's mark (``watch_polls: {ID: POLL-FAILURE}``, in the same atomic write as its
occurrences), so a watch killed in between files, when it starts again, only the failures no
incident has the mark of: each line is counted exactly once, even after a SIGKILL. One watch per
offset file, held by a lock beside it. The format, version 1::

    {"version": 1, "where": "run demo-7b", "id": "c0ffee0123456789", "polls": 17,
     "logs": {"/abs/path/train.log": {"lines": 1204, "files": [
         {"dev": 2049, "inode": 131, "offset": 88412, "line": 1205, "head": "<sha256, 32 hex>",
          "head_bytes": 1024}]}},
     "progress": {"at": "2026-11-29T12:00:00+00:00", "log": "train.log", "line": 1200,
                  "text": "step 1200 | loss 2.31"},
     "hang_raised": false,
     "pending": {"poll": 17, "failures": [{"occurrences": 2, "values": {...}, "details": {...}}]}}

``files`` lists the files of the log name oldest first: rotated files still read to their end,
then the one the name holds (``line`` is the number of the line that starts at ``offset``);
``lines`` counts every line read from the name, all files together. ``polls`` counts the polls
that filed something; ``pending`` is null unless the watch was stopped while filing. ``id``,
``polls`` and ``pending`` are absent from the files of older versions: an id is made then.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from tooling.errors import UserError
from tooling.fs.atomic import replace_file
from tooling.fs.lock import holder, try_hold
from tooling.watch.files import Position
from tooling.watch.incidents import Found
from tooling.watch.progress import Progress, Stall

VERSION = 1
RULE = "watch-offsets"
ID = "[a-f][0-9a-f]{15}"  # as the incident schema's watch_polls says


@dataclass(frozen=True)
class Pending:
    poll: int
    failures: list[Found]


def new_id() -> str:
    """16 hexadecimal digits, the first a letter: YAML reads it as text in any version (as a key,
    digits alone would be a number)."""
    return secrets.choice("abcdef") + secrets.token_hex(8)[1:]


@dataclass
class LogOffsets:
    files: list[Position] = field(default_factory=list)
    lines: int = 0


@dataclass
class WatchState:
    where: str  # "run demo-7b" or "cluster rsc-1": whose incidents the offsets led to
    logs: dict[str, LogOffsets] = field(default_factory=dict)  # by absolute path
    stall: Stall = field(default_factory=Stall)
    id: str = field(default_factory=new_id)  # the watch's name in the marks of its incidents
    polls: int = 0  # polls that filed something: the last mark's POLL
    pending: Pending | None = None  # a poll's failures not all filed yet (the journal)


def default_path(root: Path, where: str, logs: list[Path]) -> Path:
    """One offset file per repository, run (or cluster) and set of logs, in the user's state folder."""
    home = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    key = json.dumps([str(root.resolve()), where, sorted(str(p.absolute()) for p in logs)])
    return Path(home) / "tooling" / "watch" / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"


def load(path: Path, where: str) -> WatchState:
    """The offsets saved at ``path``; none yet when it does not exist."""
    if path.exists() and not path.is_file():  # a FIFO would block the read for ever
        raise UserError(f"{path}: not a regular file; expected the offset file tooling watch writes")
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
    except RecursionError:
        raise _broken(path, "nested too deeply", 1, 1) from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _broken(path, f"unexpected content: {exc}", 1, 1) from None
    if state.where != where:
        raise UserError(f"{path}: the offsets of a watch for {state.where}; expected those of a watch for {where} "
                        "(give this one its own --state FILE)")
    return state


def _broken(path: Path, what: str, line: int, col: int) -> UserError:
    return UserError(f"{path}:{line}:{col}: [{RULE}] not an offset file of tooling watch ({what}); expected the "
                     "JSON tooling watch writes (remove the file to read the logs from their start)")


def _state(data: Any) -> WatchState:
    """The state the JSON says; ValueError naming the first field that is missing or of the wrong
    type (a wrong offset would read from the middle of a line, or crash at the first poll)."""
    version = _field(data, "", "version", int)
    if version != VERSION:
        raise ValueError(f"version {version!r}, expected {VERSION}")
    logs = {}
    for name, log in _field(data, "", "logs", dict).items():
        files = _field(log, f"logs.{name}", "files", list)
        logs[name] = LogOffsets([_position(f, f"logs.{name}.files.{n}") for n, f in enumerate(files)],
                                _count(log, f"logs.{name}", "lines"))
    last = _field(data, "", "progress", (dict, type(None)))
    progress = None
    if last is not None:
        at = datetime.fromisoformat(_field(last, "progress", "at", str))
        if at.tzinfo is None:
            raise ValueError(f"progress.at {last['at']!r} has no timezone offset")
        progress = Progress(at, _field(last, "progress", "log", str), _count(last, "progress", "line"),
                            _field(last, "progress", "text", str))
    return _journal(data, WatchState(_field(data, "", "where", str), logs,
                                     Stall(progress, _field(data, "", "hang_raised", bool))))


def _journal(data: dict[str, Any], state: WatchState) -> WatchState:
    """``state`` with the file's id, poll count and journal (files of older versions have none:
    a new id then, no poll yet, nothing pending)."""
    if "id" in data:
        state.id = _field(data, "", "id", str)
        if not re.fullmatch(ID, state.id):
            raise ValueError(f"id {state.id!r}, expected 16 hexadecimal digits, the first a letter")
    state.polls = _count(data, "", "polls") if "polls" in data else 0
    pending = _field(data, "", "pending", (dict, type(None))) if "pending" in data else None
    if pending is not None:
        failures = _field(pending, "pending", "failures", list)
        state.pending = Pending(_count(pending, "pending", "poll"),
                                [_found(f, f"pending.failures.{n}") for n, f in enumerate(failures)])
    return state


def _found(data: Any, where: str) -> Found:
    return Found(_field(data, where, "values", dict), _count(data, where, "occurrences"),
                 _field(data, where, "details", dict))


def _field(data: Any, where: str, key: str, kind: type | tuple[type, ...]) -> Any:
    """``data[key]`` when ``data`` is a mapping holding one of ``kind`` there (``where``: the
    mapping's dotted place in the file, for the message)."""
    if not isinstance(data, dict):
        raise ValueError(f"{where or 'the file'} is {_name(type(data))}, expected an object")
    if key not in data:
        raise ValueError(f"{where + '.' if where else ''}{key} is missing")
    value, kinds = data[key], kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise ValueError(f"{where + '.' if where else ''}{key} is {_name(type(value))}, expected "
                         f"{' or '.join(_name(k) for k in kinds)}")
    return value


def _name(kind: type) -> str:
    """A JSON type's name."""
    return {dict: "an object", list: "a list", str: "a string", int: "a whole number", bool: "true or false",
            float: "a fraction", type(None): "null"}.get(kind, kind.__name__)


def _count(data: Any, where: str, key: str) -> int:
    value = _field(data, where, key, int)
    if value < 0:
        raise ValueError(f"{where + '.' if where else ''}{key} is {value}, expected a number >= 0")
    return value


def _position(data: Any, where: str) -> Position:
    counts = {k: _count(data, where, k) for k in ("dev", "inode", "offset", "line", "head_bytes")}
    return Position(**counts, head=_field(data, where, "head", str))


def save(path: Path, state: WatchState) -> None:
    last = state.stall.last
    data = {"version": VERSION, "where": state.where,
            "logs": {name: {"lines": log.lines, "files": [asdict(p) for p in log.files]} for name, log in state.logs.items()},
            "progress": {"at": last.at.isoformat(), "log": last.log, "line": last.line, "text": last.text} if last else None,
            "hang_raised": state.stall.raised, "id": state.id, "polls": state.polls,
            "pending": _pending_json(state.pending)}
    replace_file(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def _pending_json(pending: Pending | None) -> dict[str, Any] | None:
    if pending is None:
        return None
    return {"poll": pending.poll, "failures": [{"occurrences": f.occurrences, "values": f.values,
                                                "details": f.details} for f in pending.failures]}


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
