"""validate's checks of record files kept on disk from one command to the next.

Reading 100,000 incident files (YAML with line:col, the schema, each record's own rules) costs
about half a millisecond of CPU each; most of them have not changed since the last command. So
:class:`KeptChecks` keeps each file's result, as :class:`~tooling.rules.validate.Checked` keeps
them for `tooling serve`, under the file's path as given, its absolute path, mtime_ns and size,
and the repository, in one file of the user's cache (beside Hyperscan's databases: not in the
repository, where a pickle would be anyone's to commit). It is whole or not there (written
through :func:`tooling.fs.atomic.replace_file`, so concurrent commands each leave a complete
one); one that does not read back, or was written by other code or for another local catalogue
(:func:`fingerprint`), is ignored. A file changed within :data:`RACY` of a save is not kept, as
git does: a write in the same tick as the stat it was read under would look unchanged.
Beside each check, what the analysis derives from that file alone (its identity, its words:
:mod:`tooling.analysis.derived`), under the same key, dropped with it. ``TOOLING_NO_CACHE=1``
turns it off.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import time
from pathlib import Path
from sys import intern
from typing import Any, Sequence

from tooling.catalogue.local import LOCAL
from tooling.fs.atomic import replace_file
from tooling.records.locate import stat_key
from tooling.rules.validate import Checked, Result

RACY = 2_000_000_000  # ns: a file changed this close to a save is checked again next time
SHORT = 32  # characters: a string of a record's data up to this long is kept as one object (see _shared)
FORM = "results as objects"  # what the kept file holds: another form (each result pickled alone, before) is ignored
_PACKAGE = Path(__file__).resolve().parents[1]
_CODE = (".py", ".json", ".yaml")


def fingerprint(root: Path) -> str:
    """The code and data a check depends on besides the file: every file of the package (its
    name, size and mtime) and the repository's local catalogue."""
    parts = [os.fspath(os.path.realpath(root))]
    for path in sorted(p for p in _PACKAGE.rglob("*") if p.suffix in _CODE):
        parts.append(repr((os.fspath(path.relative_to(_PACKAGE)), (stat_key(os.fspath(path)) or ("",))[1:])))
    parts.append(repr(stat_key(os.fspath(root / LOCAL))))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def cache_file(root: Path) -> Path:
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    name = hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()[:32]
    return Path(home) / "tooling" / "checked" / f"{name}.pickle"


class KeptChecks(Checked):
    """:class:`Checked`, loaded from and saved to :func:`cache_file` (see the module's docstring)."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.file, self.code = cache_file(root), fingerprint(root)
        try:
            # one pickle, no text encoding around it: decoding base64 was a twentieth of a warm command
            form, code, kept, derived = pickle.loads(self.file.read_bytes())
            if form == FORM and code == self.code and isinstance(kept, dict) and isinstance(derived, dict):
                self.kept, self.derived = kept, derived
        except Exception:  # none yet, unreadable, cut short, other code's: check every file
            pass
        self.loaded = dict(self.kept)

    def key(self, path: str, within: str | None) -> tuple[Any, ...]:
        return (*super().key(path, within), path)  # (a result's paths are the path as given)

    # Each result kept as it is, not pickled alone: what this command read from the kept file is
    # its own copy already (no other validate of it is given the same), and 100,000 unpickles of
    # a result each cost twice what one unpickle of them all does
    def stored(self, result: Result) -> Result:
        path, data, found = result
        return path, _shared(data), found

    def given(self, stored: Any) -> Result:
        return stored  # type: ignore[no-any-return]

    def check_files(self, files: Sequence[str], *, root: Path | None = None, jobs: int | None = None) -> list[Result]:
        results = super().check_files(files, root=root, jobs=jobs)
        if not self.holding:
            self.save()
        return results

    def save(self) -> None:
        """Write what is kept, unless it is what was read; never fails a command."""
        settled = time.time_ns() - RACY
        kept = {key: result for key, result in self.kept.items() if key[0][1] < settled}
        if kept == self.loaded and not self.changed:
            return
        derived = {key: found for key, found in self.derived.items() if key in kept}
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            replace_file(self.file, pickle.dumps((FORM, self.code, kept, derived), protocol=5))
            self.file.with_suffix(".b64").unlink(missing_ok=True)  # an earlier version's kept file, 150 MB at 100,000
        except OSError:
            pass
        self.loaded, self.changed = kept, False


def _shared(value: Any) -> Any:
    """``value`` (a record's data) with its short strings interned: a string met before is one
    reference in the kept file (pickle writes an object once), so reading it back makes one object
    for each field name and each kind, status, layer or time, not one per record (over 100,000
    incidents some two million strings: the kept results read back in 0.35 s against 0.58 s)."""
    if type(value) is dict:
        return {_shared(k): _shared(v) for k, v in value.items()}
    if type(value) is list:
        return [_shared(v) for v in value]
    return intern(value) if type(value) is str and len(value) <= SHORT else value


def kept_checks(root: Path) -> KeptChecks | None:
    """The kept checks of ``root``'s record files; None when TOOLING_NO_CACHE is set."""
    return None if os.environ.get("TOOLING_NO_CACHE") else KeptChecks(root)
