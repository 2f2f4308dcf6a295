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
          "head_bytes": 1024, "end": "<sha256, 32 hex>", "end_bytes": 1024}],
         "failures": [{"mode": "gpu.fell-off-bus", "codes": [], "signatures": ["NVRM: Xid ..."],
                       "forms": ["..."], "moment": ["uptime", 812345.6]}],
         "beside": [[2049, 118]]}},
     "progress": {"at": "2026-11-29T12:00:00+00:00", "log": "train.log", "line": 1200,
                  "text": "step 1200 | loss 2.31"},
     "hang_raised": false,
     "pending": {"poll": 17, "failures": [{"occurrences": 2, "values": {...}, "details": {...},
                                           "counted": {"/abs/train.log": {"occurrences": 2, "starts": [...]}}}]}}

``files`` lists the files of the log name oldest first: rotated files still read to their end, then
the one the name holds (``line`` is the number of the line that starts at ``offset``; ``head``
fingerprints its first ``head_bytes`` bytes, ``end`` the ``end_bytes`` before ``offset``, absent
from the files of older versions); ``lines`` counts every line read from the name, all files
together; ``beside`` are the rotated files beside it at the last poll (``[device, inode]``: one new
since is perhaps a copytruncate copy of the file read, see tooling.watch.files.copy_of);
``failures`` are the failures it showed so far (``{"mode", "codes", "signatures", "forms", "moment":
["at" or "uptime", seconds] or null}``: a failure that goes on is filed as the same incident, and
its lines within a minute of the one before are the same occurrence, after a restart too). ``polls``
counts the polls that filed something; ``pending`` is null unless the watch was stopped while filing
(``counted``: where each failure's occurrences start, tooling.watch.counted). ``id``, ``polls``,
``pending`` and ``counted`` are absent from the files of older versions: an id is made then.
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
from tooling.logs import draft_book, drafts
from tooling.watch import counted
from tooling.watch.files import Position
from tooling.watch.json_fields import count as _count
from tooling.watch.json_fields import field as _field
from tooling.watch.json_fields import strings as _strings
from tooling.watch.occurrences import Found
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
    seen: dict[drafts.Key, draft_book.Seen] = field(default_factory=dict)  # its failures so far (see draft_book.Seen)
    beside: set[tuple[int, int]] | None = None  # rotated files beside it (device, inode); None: not known


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
                                _count(log, f"logs.{name}", "lines"), _seen(log, f"logs.{name}"),
                                _beside(log, f"logs.{name}"))
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
                 _field(data, where, "details", dict), counted.from_json(data.get("counted", {}), f"{where}.counted"))


def _position(data: Any, where: str) -> Position:
    counts = {k: _count(data, where, k) for k in ("dev", "inode", "offset", "line", "head_bytes")}
    end = _field(data, where, "end", str) if isinstance(data, dict) and "end" in data else None
    return Position(**counts, head=_field(data, where, "head", str), end=end,
                    end_bytes=_count(data, where, "end_bytes") if end is not None else 0)


def save(path: Path, state: WatchState) -> None:
    last = state.stall.last
    data = {"version": VERSION, "where": state.where,
            "logs": {name: {"lines": log.lines, "files": [asdict(p) for p in log.files], "failures": _seen_json(log.seen),
                            "beside": sorted(map(list, log.beside)) if log.beside is not None else None}
                     for name, log in state.logs.items()},
            "progress": {"at": last.at.isoformat(), "log": last.log, "line": last.line, "text": last.text} if last else None,
            "hang_raised": state.stall.raised, "id": state.id, "polls": state.polls,
            "pending": _pending_json(state.pending)}
    replace_file(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def _seen(log: dict[str, Any], where: str) -> dict[drafts.Key, draft_book.Seen]:
    """The failures a log showed so far, each with its first signatures and the moment of its
    latest line (none in the files of older versions)."""
    seen = {}
    for n, item in enumerate(_field(log, where, "failures", list) if "failures" in log else []):
        at = f"{where}.failures.{n}"
        moment = _field(item, at, "moment", (list, type(None)))
        if moment is not None and (len(moment) != 2 or moment[0] not in ("at", "uptime")
                                   or not isinstance(moment[1], (int, float)) or isinstance(moment[1], bool)):
            raise ValueError(f"{at}.moment is {moment!r}, expected [\"at\" or \"uptime\", seconds] or null")
        key = (_field(item, at, "mode", str), tuple(_strings(item, at, "codes")))
        seen[key] = draft_book.Seen(tuple(_strings(item, at, "signatures")), tuple(_strings(item, at, "forms")),
                                    (moment[0], float(moment[1])) if moment else None)
    return seen


def _beside(log: dict[str, Any], where: str) -> set[tuple[int, int]] | None:
    """The rotated files that were beside a log at the last poll (a file new beside it since may
    be a copy copytruncate made); None in the files of older versions."""
    found = _field(log, where, "beside", (list, type(None))) if "beside" in log else None
    if found is None:
        return None
    if not all(isinstance(pair, list) and len(pair) == 2 and all(type(n) is int and n >= 0 for n in pair) for pair in found):
        raise ValueError(f"{where}.beside is not a list of [device, inode], expected whole numbers >= 0")
    return {(pair[0], pair[1]) for pair in found}


def _seen_json(seen: dict[drafts.Key, draft_book.Seen]) -> list[dict[str, Any]]:
    return [{"mode": mode, "codes": list(codes), "signatures": list(s.signatures), "forms": list(s.forms),
             "moment": list(s.moment) if s.moment else None} for (mode, codes), s in seen.items()]


def _pending_json(pending: Pending | None) -> dict[str, Any] | None:
    if pending is None:
        return None
    return {"poll": pending.poll, "failures": [{"occurrences": f.occurrences, "values": f.values, "details": f.details,
                                                "counted": counted.as_json(f.counted)} for f in pending.failures]}


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
