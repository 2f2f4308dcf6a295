"""What a node's health checks remember, in one JSON file per node (``--state``).

Written only by a check that acted (filed an incident or drained the node), under a lock beside
it (one check of a node at a time: the Prolog and the HealthCheckProgram may meet), replaced
atomically. A healthy check writes nothing. Version 1::

    {"version": 1, "node": "n2", "id": "c0ffee0123456789", "polls": 2,
     "kernel": {"last": "[ 812.5] NVRM: Xid (PCI:0000:3b:00): 79, ...", "nth": 1},
     "standing": {"space /ckpt": {"lines": ["/ckpt: 0 B free of 2.0 MiB (100% used)"],
                                  "incident": "INC-0042"}}}

``kernel`` is where the kernel's lines were read to (:class:`tooling.health.kernel.Offset`);
``standing`` the standing faults filed, each with the lines it was filed with and its incident
(filed again only when its lines change; forgotten once it is gone); ``id`` and ``polls`` make
the mark each incident filed carries (``watch_polls``, as ``tooling watch`` marks its own), so a
check killed between filing and saving this file does not file the same lines twice.
"""
from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from tooling.errors import UserError
from tooling.fs.atomic import replace_file
from tooling.fs.lock import holder, try_hold
from tooling.health.kernel import Offset

VERSION = 1
RULE = "health-state"


@dataclass
class NodeState:
    node: str
    id: str = ""  # made when it first files (tooling.watch.state.new_id)
    polls: int = 0
    kernel: Offset | None = None
    standing: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {"lines", "incident"}


def default_path(node: str) -> Path:
    """In the user's state folder, as tooling watch keeps its offsets."""
    home = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(home) / "tooling" / "health" / f"{node}.json"


def load(path: Path, node: str) -> NodeState:
    if path.exists() and not path.is_file():  # a FIFO would block the read for ever
        raise _bad(path, "not a regular file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return NodeState(node)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise _bad(path, str(exc)) from None
    try:
        kernel = data.get("kernel")
        return NodeState(str(data["node"]), str(data["id"]), int(data["polls"]),
                         Offset(str(kernel["last"]), int(kernel["nth"])) if kernel else None,
                         {str(k): dict(v) for k, v in data.get("standing", {}).items()})
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _bad(path, f"no {exc}" if isinstance(exc, KeyError) else str(exc)) from None


def _bad(path: Path, what: str) -> UserError:
    return UserError(f"{path}:1:1: [{RULE}] not a state file of tooling health-check ({what}); expected the JSON "
                     "file it writes: remove it to start afresh (kernel lines already acted on are read again)")


def save(path: Path, state: NodeState) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    kernel = {"last": state.kernel.last, "nth": state.kernel.nth} if state.kernel else None
    replace_file(path, json.dumps({"version": VERSION, "node": state.node, "id": state.id, "polls": state.polls,
                                   "kernel": kernel, "standing": state.standing}, ensure_ascii=False, indent=1) + "\n")


@contextmanager
def held(path: Path, *, timeout: float) -> Iterator[None]:
    """The node's lock (``STATE.lock``), waited for at most ``timeout`` seconds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_name(path.name + ".lock")
    deadline = time.monotonic() + timeout
    while (fd := try_hold(lock)) is None:
        if time.monotonic() > deadline:
            raise UserError(f"{lock}:1:1: [{RULE}] another health check of this node (pid {holder(lock)}) held "
                            f"the lock for {timeout:g} s; expected one check of a node at a time")
        time.sleep(0.05)
    try:
        yield
    finally:
        os.close(fd)
