"""``.playbook.lock``: what the shipped playbook was when a team's repository was made from it.

`tooling init` writes it: the package's version and a sha256 of each shipped playbook file
(``docs/`` and ``runbooks/`` as the package carries them) and of each shipped failure mode.
`tooling doctor` compares it with the package installed now: an override (a file of the same
path, a local failure mode of the same id) whose shipped counterpart's hash changed is stale,
the upgrade having changed what the team's copy was made from.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import yaml

from tooling.catalogue.modes import shipped_entries
from tooling.errors import UserError
from tooling.records.shipped import shipped_root

LOCK = ".playbook.lock"
DISTRIBUTION = "resilience-playbook-tooling"
PLAYBOOK_DIRS = ("docs", "runbooks")
# not the playbook: pages each build writes, and the bundled run pages (records, `init --demo`'s)
NOT_PLAYBOOK = ("docs/generated/", "runbooks/runs/")
HEADER = """\
# Written by `tooling init`: the playbook this repository was made from (the package's version,
# a sha256 of each shipped file and failure mode). `tooling doctor` compares it with the package
# installed now to name the overrides whose shipped counterpart changed since. Not edited by hand.
"""


@dataclass(frozen=True)
class Lock:
    version: str
    files: dict[str, str] = field(default_factory=dict)  # shipped path -> sha256
    failure_modes: dict[str, str] = field(default_factory=dict)  # shipped mode id -> sha256


def package_version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def shipped_files() -> dict[str, str]:
    """Each shipped playbook file (path relative to the shipped root, with /) -> its sha256."""
    root = shipped_root()
    found: dict[str, str] = {}
    for top in PLAYBOOK_DIRS:
        for parent, dirs, names in os.walk(root / top):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
            for name in sorted(names):
                path = Path(parent) / name
                relative = path.relative_to(root).as_posix()
                if not name.startswith(".") and not relative.startswith(NOT_PLAYBOOK):
                    found[relative] = _sha(path.read_bytes())
    return found


def mode_hashes() -> dict[str, str]:
    """Each shipped failure mode's id -> the sha256 of its entry (keys sorted: order is not a change)."""
    return {entry["id"]: _sha(json.dumps(entry, sort_keys=True, ensure_ascii=False).encode("utf-8"))
            for entry in shipped_entries()}


def current() -> Lock:
    """The lock of the package installed now."""
    return Lock(package_version(), shipped_files(), mode_hashes())


def lock_text(lock: Lock) -> str:
    body = {"version": lock.version, "files": lock.files, "failure_modes": lock.failure_modes}
    return HEADER + yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=1000)


def read_lock(root: Path) -> Lock | None:
    """The repository's lock, None when it has none; a lock that does not read is a located error."""
    path = root / LOCK
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        where = getattr(exc, "problem_mark", None)
        line, col = (where.line + 1, where.column + 1) if where is not None else (1, 1)
        raise UserError(f"{LOCK}:{line}:{col}: [playbook-lock] does not read ({str(exc).splitlines()[0]}); "
                        f"expected the file `tooling init` wrote (delete it to compare against nothing)") from None
    if not (isinstance(data, dict) and isinstance(data.get("files"), dict)
            and isinstance(data.get("failure_modes", {}), dict)):
        raise UserError(f"{LOCK}:1:1: [playbook-lock] not a lock (version, files, failure_modes); "
                        f"expected the file `tooling init` wrote (delete it to compare against nothing)")
    return Lock(str(data.get("version")), {str(k): str(v) for k, v in data["files"].items()},
                {str(k): str(v) for k, v in (data.get("failure_modes") or {}).items()})
