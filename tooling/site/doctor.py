"""`tooling doctor`: how a team's repository stands against the playbook the package ships.

What it overrides (a file of ``docs/`` or ``runbooks/`` of the same path as a shipped one; a
local failure mode, changed when its id is a shipped mode's, else added), which overrides are
stale (the shipped counterpart changed since ``.playbook.lock`` was written: an upgrade the
team's copy has not taken in), and what is missing for the site to build with the playbook.
Overrides are the team's right; stale and missing ones are problems.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tooling.catalogue.local import LOCAL
from tooling.records.load import load_file
from tooling.records.shipped import is_shipped, shipped_root
from tooling.site.config import CONFIG_FILE, read_site_config
from tooling.writers.playbook_lock import LOCK, NOT_PLAYBOOK, PLAYBOOK_DIRS, Lock, current, read_lock

PLUGIN = "playbook"  # as mkdocs.yml names the package's plugin
VERBS = {"overridden": "overrides", "changed": "changes", "added": "adds"}
FOLDERS = ("incidents", "runbooks/runs")  # the record folders a team's repository holds


@dataclass(frozen=True)
class Override:
    name: str  # a path (a file) or an id (a failure mode)
    change: str  # "overridden" (a file), "changed" or "added" (a failure mode)
    stale: str | None = None  # why, when the shipped counterpart changed since the lock

    def line(self) -> str:
        what = self.name if self.change == "overridden" else f"failure mode {self.name} ({LOCAL.as_posix()})"
        return f"{VERBS[self.change]} {what}" + (" (stale)" if self.stale else "")


@dataclass
class Health:
    shipped: bool = False  # the repository is the shipped playbook itself
    overrides: list[Override] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one line each: stale overrides, what is missing

    def as_json(self) -> dict[str, object]:
        return {"shipped": self.shipped, "overrides": [asdict(o) for o in self.overrides], "problems": self.problems}


def doctor(root: Path) -> Health:
    if is_shipped(root):
        return Health(shipped=True)
    now = current()
    lock = read_lock(root)
    health = Health(overrides=[*_file_overrides(root, now, lock), *_mode_overrides(root, now, lock)])
    health.problems = [f"{o.name if o.change == 'overridden' else LOCAL.as_posix()}: [stale-override] {o.stale}; "
                       f"expected its changes taken into this copy, then `tooling doctor --relock`"
                       for o in health.overrides if o.stale]
    health.problems += _missing(root, lock)
    return health


def _stale(name: str, what: str, now: dict[str, str], then: dict[str, str] | None, lock: Lock | None,
           installed: str) -> str | None:
    """Why the override ``name`` is stale (``what``: how to call its shipped counterpart), or None."""
    if then is None or lock is None:
        return None  # no lock: nothing to compare with (a problem of its own)
    if name not in then:
        return f"{what} is new since {LOCK} was written (playbook {lock.version}, installed {installed})"
    if then[name] != now[name]:
        return f"{what} changed since {LOCK} was written (playbook {lock.version}, installed {installed})"
    return None


def _file_overrides(root: Path, now: Lock, lock: Lock | None) -> list[Override]:
    found = []
    for relative in sorted(_team_files(root)):
        if relative in now.files:
            stale = _stale(relative, f"the shipped {relative}", now.files, lock.files if lock else None, lock,
                           now.version)
            found.append(Override(relative, "overridden", stale))
    return found


def _team_files(root: Path) -> list[str]:
    files = []
    for top in PLAYBOOK_DIRS:
        for parent, dirs, names in os.walk(root / top):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            files += [(Path(parent) / n).relative_to(root).as_posix() for n in names if not n.startswith(".")]
    return [f for f in files if not f.startswith(NOT_PLAYBOOK)]


def _mode_overrides(root: Path, now: Lock, lock: Lock | None) -> list[Override]:
    path = root / LOCAL
    if not path.is_file():
        return []
    data = load_file(str(path)).data  # a broken file: validate's to say; its readable ids are listed
    ids = [e["id"] for e in data if isinstance(e, dict) and isinstance(e.get("id"), str)] if isinstance(data, list) else []
    then = lock.failure_modes if lock else None
    return [Override(mode, "changed", _stale(mode, f"the shipped failure mode {mode}", now.failure_modes, then, lock,
                                             now.version))
            if mode in now.failure_modes else Override(mode, "added") for mode in ids]


def _missing(root: Path, lock: Lock | None) -> list[str]:
    missing = []
    config = read_site_config(root)
    if config.text is None:
        missing.append(f"{CONFIG_FILE}: [missing] no such file; expected the site's config (`tooling init` writes one)")
    elif not _names_plugin(config.data):
        missing.append(f"{CONFIG_FILE}: [missing] its plugins do not name `{PLUGIN}`; expected `- {PLUGIN}` "
                       f"after i18n and before literate-nav (the playbook's pages come from it)")
    missing += [f"{folder}/: [missing] no such folder; expected the records folder `tooling init` makes"
                for folder in FOLDERS if not (root / folder).is_dir()]
    if lock is None:
        missing.append(f"{LOCK}: [missing] no such file; expected the lock `tooling init` writes, to tell stale "
                       f"overrides (`tooling doctor --relock` writes one for the playbook installed now)")
    return missing


def _names_plugin(config: dict[str, object]) -> bool:
    plugins = config.get("plugins")
    names = [p if isinstance(p, str) else next(iter(p), None) for p in plugins if isinstance(p, (str, dict))] \
        if isinstance(plugins, list) else list(plugins) if isinstance(plugins, dict) else []
    return PLUGIN in names


def relock(root: Path) -> Path:
    """Write the lock of the playbook installed now: the overrides are taken to be up to date."""
    from tooling.fs.atomic import replace_file
    from tooling.writers.playbook_lock import lock_text

    replace_file(root / LOCK, lock_text(current()))
    return root / LOCK


def shipped_line() -> str:
    return f"this is the shipped playbook itself ({shipped_root()}): it overrides nothing"
