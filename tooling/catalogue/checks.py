"""What is wrong with a failure-mode catalogue: its schema, unique ids, compiling patterns, known
automations, refinements in order, codes owned once. One check for the shipped catalogue (a bug of
the package, found by its tests) and a team's local one (``tooling validate``, located)."""
from __future__ import annotations

import hashlib
import json
import platform
import re
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from tooling.catalogue.local import LOCAL
from tooling.errors import UserError
from tooling.records.findings import Finding
from tooling.records.load import load_file
from tooling.records.locate import locate

FLAGS = re.IGNORECASE  # recognisers and keywords are matched without regard to case
CODES = ("xid", "errno", "exit_codes")

RULE = "local-catalogue"
# where in the entries (a JSON path: index first, then keys) and what is wrong there
Problem = tuple[tuple[str | int, ...], str]


def text(name: str, package: str = "tooling.catalogue") -> str:
    return resources.files(package).joinpath(name).read_text("utf-8")


def check(entries: Any) -> list[str]:
    """Problems of a catalogue, one line each."""
    return [message for _, message in problems(entries)]


def problems(entries: Any) -> list[Problem]:
    """Problems of a catalogue, each with where it is: the schema's first, the rest once it holds."""
    found = schema_problems(entries)
    return found or consistency(entries)


def shipped_problems(entries: Any, source: str) -> list[str]:
    """:func:`check` of the shipped catalogue (``source``: its text), done once for its text, its
    schema, the automations and this module: a catalogue found sound leaves a mark in the user's
    cache, and a command that finds the mark skips the check (and the import of jsonschema):
    a quarter of a second of every command's start, `tooling scan`'s among them."""
    from tooling.catalogue.engine import cache_dir

    parts = [source, text("failure-modes.schema.json", "tooling.schemas"), text("automations.yaml"),
             Path(__file__).read_text("utf-8"), platform.python_version()]  # (its re compiles the patterns)
    mark = cache_dir("checked-catalogue") / hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]
    if mark.exists():
        return []
    found = check(entries)
    if not found:
        try:  # an empty file: whole or not there; a cache that cannot be written only means checking again
            mark.parent.mkdir(parents=True, exist_ok=True)
            mark.touch()
        except OSError:
            pass
    return found


def schema_problems(entries: Any) -> list[Problem]:
    import jsonschema  # here: a tenth of a second to import, which a command whose catalogue is known sound skips

    schema = json.loads(text("failure-modes.schema.json", "tooling.schemas"))
    return [(tuple(e.absolute_path), f"{'/'.join(map(str, e.absolute_path))}: {e.message}")
            for e in jsonschema.Draft202012Validator(schema).iter_errors(entries)]


def consistency(entries: list[dict[str, Any]]) -> list[Problem]:
    """What the schema cannot say, of entries that each hold to it."""
    automations = {a["id"] for a in yaml.safe_load(text("automations.yaml"))}
    ids = {e["id"] for e in entries}
    found: list[Problem] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        if entry["id"] in seen:
            found.append(((index, "id"), f"{entry['id']}: the id is used twice"))
        seen.add(entry["id"])
        if entry["automation"] not in automations:
            found.append(((index, "automation"),
                          f"{entry['id']}: automation {entry['automation']!r} is not in automations.yaml"))
        found += _refinement(index, entry, seen, ids)
        for key in ("recognisers", "keywords", "routine"):
            for number, pattern in enumerate(entry.get(key, [])):
                try:
                    re.compile(pattern, FLAGS)
                except re.error as exc:
                    found.append(((index, key, number), f"{entry['id']}: pattern {pattern!r} does not compile: {exc}"))
    for kind in CODES:
        owners: dict[int, str] = {}
        for index, entry in enumerate(entries):
            for number, code in enumerate(entry.get(kind, [])):
                if code in owners:
                    found.append(((index, kind, number), f"{entry['id']}: {kind} {code} already belongs to {owners[code]}"))
                owners[code] = entry["id"]
    return found


def _refinement(index: int, entry: dict[str, Any], before: set[str], ids: set[str]) -> list[Problem]:
    """A mode refines one that exists and comes after it (specific before general, so no cycle);
    the mode it is after a run's start exists."""
    later = entry.get("after_start")
    if later is not None and later not in ids:
        return [((index, "after_start"), f"{entry['id']}: after_start {later!r}, which is not in the catalogue")]
    ended = [(n, mode) for n, mode in enumerate(entry.get("end_of", ())) if mode not in ids]
    if ended:
        return [((index, "end_of", ended[0][0]), f"{entry['id']}: end_of {ended[0][1]!r}, which is not in the catalogue")]
    parent = entry.get("refines")
    if parent is None:
        return []
    if parent not in ids:
        return [((index, "refines"), f"{entry['id']}: refines {parent!r}, which is not in the catalogue")]
    if parent in before:
        return [((index, "refines"),
                 f"{entry['id']}: refines {parent!r}, which must come after it (specific before general)")]
    return []


# A team's local catalogue (runbooks/catalogue.yaml), merged into the shipped one and located

class LocalCatalogueError(UserError):
    """The team's catalogue does not hold: the first problem, located; validate lists them all."""


def local_entries(path: str, shipped: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Finding]]:
    """The local catalogue at ``path`` merged into ``shipped``, or the findings that stop it."""
    loaded = load_file(path)
    if loaded.findings:
        return shipped, loaded.findings
    local = loaded.data
    found = schema_problems(local)
    if found:
        return shipped, [_finding(path, where, f"{message}; expected an entry as failure-modes.schema.json "
                                  "describes the shipped ones") for where, message in found]
    merged, origin = merge(shipped, local)
    problems = [_finding(path, _in_local(where, origin), message) for where, message in consistency(merged)]
    return (shipped, problems) if problems else (merged, [])


def holds(root: Path, shipped: list[dict[str, Any]]) -> bool:
    """Whether ``root`` has no local catalogue or one without problems (validate reads a broken
    one's problems from the file and checks the records against the shipped catalogue alone)."""
    path = root / LOCAL
    return not path.is_file() or not local_findings(str(path), shipped)


def local_findings(path: str, shipped: list[dict[str, Any]]) -> list[Finding]:
    return local_entries(path, shipped)[1]


def merge(shipped: list[dict[str, Any]], local: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[int | None]]:
    """(the merged entries, each one's index in ``local``, or None for a shipped entry kept)."""
    by_id = {entry["id"]: index for index, entry in enumerate(local)}
    shipped_ids = {entry["id"] for entry in shipped}
    added: list[int | None] = [i for i, entry in enumerate(local) if entry["id"] not in shipped_ids]
    kept: list[int | None] = [by_id.get(entry["id"]) for entry in shipped]
    merged = [local[i] for i in added if i is not None]
    merged += [local[i] if i is not None else entry for i, entry in zip(kept, shipped)]
    return merged, added + kept


def _in_local(where: tuple[str | int, ...], origin: list[int | None]) -> tuple[str | int, ...]:
    """A problem's place in the local file; one in a shipped entry (a code a local mode also
    claims, a shipped mode refining one replaced) is put at the top of the file."""
    local = origin[where[0]] if where and isinstance(where[0], int) else None
    return (local, *where[1:]) if local is not None else ()


def _finding(path: str, where: tuple[str | int, ...], message: str) -> Finding:
    return Finding(path, *locate(path, list(where)), RULE, message)


def raise_first(found: list[Finding]) -> None:
    if found:
        more = f" (and {len(found) - 1} more: tooling validate lists them)" if len(found) > 1 else ""
        raise LocalCatalogueError(found[0].format(relative_to=Path.cwd()) + more)
