"""Where records live on disk: the repository root, its record folders, files and ids.

The one module that knows which folder holds which kind, what counts as a record file
(``.yaml``, or ``.yml`` as people also write it; never a hidden file) and how an id typed on
the command line becomes a path. Every command finds records through it.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from tooling.errors import UsageError, UserError
from tooling.records.findings import excerpt, shown_path
from tooling.records.kinds import KINDS, RECORD_DIRS
from tooling.records.reading import read_text
from tooling.records.schema import field_spec
from tooling.records.shipped import shipped_root, takes_shipped

SUFFIXES = (".yaml", ".yml")  # tooling writes .yaml; both are read
# Kinds that come with the package (tooling.records.shipped): a team's repository has them
# without copying them, and its own file of the same id overrides the shipped one. Incidents,
# postmortems and runs are only ever the team's own.
SHIPPED_KINDS = ("ladder", "ladder-overlay", "stack", "stack-overlay")
_MARKERS = ("mkdocs.yml", *RECORD_DIRS)


# the names record_stem takes, for a filter in C over a folder of 10,000 names
RECORD_NAME = re.compile(r"(?s)[^.].*(?:" + "|".join(re.escape(s) for s in SUFFIXES) + r")\Z")


def record_stem(name: str) -> str | None:
    """The id part of a record file name, or None when the name is not a record file's."""
    if name.startswith("."):
        return None
    for suffix in SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def highest_numbered(names: Iterable[str], prefix: str) -> int:
    """The highest N of the names ``<prefix>N.yaml`` (or ``.yml``) among ``names``; 0 if none."""
    # the names joined by "/", which no name holds, and matched at once: a folder of 10,000 records
    # takes no Python call a name
    pattern = re.compile(rf"(?:\A|/){re.escape(prefix)}(\d+)\.ya?ml(?=/|\Z)")
    return max(map(int, pattern.findall("/".join(names))), default=0)


def find_root(start: Path | None = None) -> Path:
    """The nearest folder at or above ``start`` that holds mkdocs.yml or a records folder."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if any((folder / marker).exists() for marker in _MARKERS):
            return folder
    return here


def record_dirs(root: Path) -> list[Path]:
    """The record folders that exist under ``root``."""
    return [root / d for d in RECORD_DIRS if (root / d).is_dir()]


def shipped_records(root: Path) -> list[Path]:
    """The shipped ladders and stack (and their translations) that the repository at ``root``
    does not override: a file of its own with the same id overrides the shipped record and its
    translations, one with the same id and language only that translation. None for a repository
    that does not take the shipped playbook (its mkdocs.yml names no `playbook` plugin) and for the
    shipped root itself (this repository), whose records are its own."""
    if not takes_shipped(root):
        return []
    found = []
    for folder in sorted({KINDS[k].directory for k in SHIPPED_KINDS}):
        shipped = shipped_root() / folder
        names = sorted(p.name for p in shipped.iterdir() if p.is_file()) if shipped.is_dir() else []
        for name in names:
            stem = record_stem(name)
            if stem is None:
                continue
            own = {stem, stem.split(".", 1)[0]}  # hang.ko: hang.ko.yaml, or hang.yaml, of the team's
            if not any((root / folder / f"{s}{suffix}").exists() for s in own for suffix in SUFFIXES):
                found.append(shipped / name)
    return found


def record_sources(root: Path) -> list[Path]:
    """Everything the repository at ``root`` reads as its records: its record folders and the
    shipped records it does not override. validate, build and triage all read these."""
    return [*record_dirs(root), *shipped_records(root)]


def shipped_record(root: Path, kind: str, record_id: str) -> Path | None:
    """The shipped file of the ``kind`` record ``record_id`` that ``root`` reads, or None (no such
    record shipped, or the repository overrides it)."""
    names = {f"{record_id}{suffix}" for suffix in SUFFIXES}
    folder = shipped_root() / KINDS[kind].directory
    return next((p for p in shipped_records(root) if p.name in names and p.parent == folder), None)


def meant_name(name: str) -> str | None:
    """The record file name meant by a name that is not one but looks meant for a record (its
    suffix in capitals, a space or line break around it, JSON, which is YAML too), or None."""
    if name.startswith(".") or record_stem(name) is not None:
        return None
    stem, dot, suffix = name.strip().rpartition(".")
    if not (dot and stem and f".{suffix.lower()}" in (*SUFFIXES, ".json")):
        return None
    # JSON is also what other tools leave beside records (py-spy dumps, flight recorder traces):
    # it is meant for a record only when its name is an id that only records have (INC-, PM-)
    if suffix.lower() == "json" and not any(k.id_prefix and is_id(k.name, stem) for k in KINDS.values()):
        return None
    return f"{stem}.yaml" if suffix.lower() == "json" else f"{stem}.{suffix.lower()}"


def _walk(folder: Path, misnamed: list[str] | None) -> list[str]:
    found = []
    for parent, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        # a folder named like a record is listed too: reading it says it is not the record file
        found.extend(os.path.join(parent, n) for n in sorted([*names, *dirs]) if record_stem(n) is not None)
        if misnamed is not None:
            misnamed.extend(os.path.join(parent, n) for n in sorted(names) if meant_name(n) is not None)
    return found


def record_files(paths: Iterable[Path], *, misnamed: list[str] | None = None) -> list[str]:
    """Record files named by ``paths`` (files, or folders walked for record files), once each.
    A link to nothing and a folder named like a record are listed: reading them says what they are.
    Files of walked folders that look meant for records but are not read are added to ``misnamed``."""
    files: list[str] = []
    for path in paths:
        if path.is_dir():
            files.extend([str(path)] if record_stem(path.name) is not None else [])
            files.extend(_walk(path, misnamed))
        elif path.is_file() or path.is_symlink():
            files.append(str(path))
        elif os.path.lexists(path):
            raise UsageError(f"{path}: not a regular file or folder; expected a record file or a folder of them")
        else:
            raise UsageError(f"{path}: no such file or directory")
    return list(dict.fromkeys(files))


def repository_files(root: Path) -> list[str]:
    return record_files(record_sources(root))


@lru_cache(maxsize=None)
def _id_rule(kind: str) -> tuple[re.Pattern[str], int | None]:
    """The kind's id pattern and longest id, as its schema states them."""
    spec = field_spec(kind, "id")
    return re.compile(spec["pattern"]), spec.get("maxLength")


def is_id(kind: str, text: str) -> bool:
    """Whether ``text`` is a ``kind`` id by its schema: pattern and length (a name longer than
    the file system allows is refused as an id, not met as an error of the file system)."""
    pattern, longest = _id_rule(kind)
    return (longest is None or len(text) <= longest) and pattern.fullmatch(text) is not None


def kinds_of(record_id: str) -> list[str]:
    """The kinds whose id pattern ``record_id`` matches, most specific (prefixed) first."""
    matching = [k for k in KINDS.values() if is_id(k.name, record_id)]
    return [k.name for k in sorted(matching, key=lambda k: not k.id_prefix)]


def ids(root: Path, kind: str) -> list[str]:
    """Ids of the ``kind`` records that exist, by file name."""
    folder = root / KINDS[kind].directory
    if not folder.is_dir():
        return []
    stems = (record_stem(p.name) for p in folder.iterdir() if p.is_file())
    return sorted({s for s in stems if s is not None and is_id(kind, s)})


def record_paths(root: Path, kind: str, record_id: str) -> list[Path]:
    """Where the ``kind`` record ``record_id`` of the repository at ``root`` may be, by its name."""
    return [root / KINDS[kind].directory / f"{record_id}{suffix}" for suffix in SUFFIXES]


def path_of(root: Path, record_id: str, *, kinds: Iterable[str] | None = None) -> Path:
    """The file of the record ``record_id``; never a path outside the repository.

    The id must look like an id (so ``../x`` or ``/etc/x`` never become paths), and a
    symbolic link is followed only when its target is inside ``root``.
    """
    # an overlay's file name is <id>.<lang>.yaml: the id alone names the English record
    allowed = list(kinds) if kinds is not None else [k for k, v in KINDS.items() if v.translates is None]
    candidates = [k for k in kinds_of(record_id) if k in allowed]
    if not candidates:
        examples = {"incident": "INC-0042", "postmortem": "PM-0007", "run": "demo-7b", "ladder": "hang",
                    "stack": "stack"}
        raise UsageError(f"expected a record id such as {', '.join(examples[k] for k in allowed)} "
                         f"but received: {excerpt(record_id)}")
    for kind in candidates:
        for path in record_paths(root, kind, record_id):
            if path.is_file():
                return _inside(root, path)
            if path.is_symlink() and not path.exists():  # a link to nothing: say so, as validate does
                _, problem = read_text(str(path))
                if problem is not None:
                    raise UserError(problem.format(relative_to=root))
    folders = _either([KINDS[k].directory + "/" for k in candidates])
    raise UserError(f"no record with id {excerpt(record_id)} in {folders}; expected the id of an existing "
                    f"{_either(candidates)} record")


def _either(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _inside(root: Path, path: Path) -> Path:
    real = Path(os.path.realpath(path))
    if not real.is_relative_to(Path(os.path.realpath(root))):
        raise UserError(f"{shown_path(str(path), root)}: a symbolic link to a file outside the repository; "
                        "expected the record itself (tooling does not edit files outside the repository)")
    return path

