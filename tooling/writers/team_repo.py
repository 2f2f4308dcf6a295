"""`tooling init DIR`: a team's wiki repository, its records folders and what runs on them.

The files come from templates beside this module (``team/``: package data), with ``@name@``
markers filled in. Nothing existing is ever overwritten: a folder that is not empty is refused
unless the caller says so (``force``), and even then each file already there is left as it is
and named as skipped. Each file is created whole or not at all (:func:`tooling.fs.atomic.create_file`);
a failure part way removes what this run created, so that a failed init leaves the folder as it was.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from tooling.errors import UsageError, UserError
from tooling.fs.atomic import create_file
from tooling.records.shipped import shipped_root
from tooling.writers.playbook_lock import LOCK, current, lock_text, package_version

LANGUAGES = ("en", "ko")  # the editions of the site: English always (the default), Korean beside it
PLAYBOOK_REPO = "https://github.com/example/resilience-playbook"  # the shipped hook's repository
DEMO_DIRS = ("incidents", "runbooks/runs")  # what `--demo` copies of the bundled records
KEEP = ".gitkeep"  # an empty folder git keeps
_MARKER = re.compile(r"@([a-z_]+)@")
_LINE = re.compile(r"^@([a-z_]+)@\n", re.MULTILINE)

# path in the team's repository -> its template (team/), written in this order
TEMPLATES = {
    "mkdocs.yml": "mkdocs.yml",
    "README.md": "README.md",
    "requirements.txt": "requirements.txt",
    ".pre-commit-config.yaml": "pre-commit-config.yaml",
    ".github/workflows/wiki.yml": "github-wiki.yml",
    ".gitlab-ci.yml": "gitlab-ci.yml",
    ".gitignore": "gitignore",
}
EMPTY_DIRS = ("docs", "incidents", "runbooks/runs")


@dataclass
class Initialised:
    written: list[str] = field(default_factory=list)  # paths relative to the folder, in order
    skipped: list[str] = field(default_factory=list)  # there already: left as they were


def languages(text: str) -> tuple[str, ...]:
    """``en`` or ``en,ko`` (any order, no repeats) -> the editions, English first."""
    given = [part.strip() for part in text.split(",")]
    if "en" not in given or len(set(given)) != len(given) or not set(given) <= set(LANGUAGES):
        raise UsageError(f"--lang: Expected one of: [en, en,ko] but received: {text!r}")
    return tuple(lang for lang in LANGUAGES if lang in given)


def _template(name: str) -> str:
    return resources.files("tooling.writers").joinpath("team", name).read_text("utf-8")


def _fill(text: str, values: dict[str, str]) -> str:
    """``text`` with each ``@name@`` replaced; a marker alone on its line that fills to nothing
    takes its line with it."""
    text = _LINE.sub(lambda m: values[m.group(1)] + "\n" if values[m.group(1)] else "", text)
    return _MARKER.sub(lambda m: values[m.group(1)], text)


def planned(*, name: str, langs: tuple[str, ...], demo: bool) -> dict[str, str]:
    """Every file init writes: path relative to the folder -> its text."""
    version = package_version()
    values = {"site_name": name, "site_name_yaml": json.dumps(name, ensure_ascii=False), "version": version, "playbook_repo": PLAYBOOK_REPO,
              "requirement": f"resilience-playbook-tooling[wiki]=={version}"}
    both = "ko" in langs
    values["editions"] = _fill(_template("i18n.yml"), values).rstrip("\n") if both else ""
    values["editions_search"] = _template("editions.yml").rstrip("\n") if both else ""
    values["english_only"] = "" if both else _template("english-only.yml").rstrip("\n")
    files = {path: _fill(_template(template), values) for path, template in TEMPLATES.items()}
    files.update({f"{folder}/{KEEP}": "" for folder in EMPTY_DIRS})
    if demo:
        files.update(_demo_records())
    files[LOCK] = lock_text(current())
    return files


def _demo_records() -> dict[str, str]:
    """The example run, incidents and postmortems this package bundles, as they are."""
    root = shipped_root()
    found: dict[str, str] = {}
    for folder in DEMO_DIRS:
        for path in sorted((root / folder).glob("*.yaml")):
            found[f"{folder}/{path.name}"] = path.read_text(encoding="utf-8")
    return found


def init_repository(target: Path, *, name: str | None = None, langs: tuple[str, ...] = ("en",),
                    demo: bool = False, force: bool = False) -> Initialised:
    """Write a team's wiki repository into ``target`` (made when missing)."""
    _check_target(target, force=force)
    files = planned(name=name or target.resolve().name, langs=langs, demo=demo)
    done = Initialised()
    try:
        for relative, text in files.items():
            path = target / relative
            if os.path.lexists(path):
                done.skipped.append(relative)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                create_file(path, text)
            except FileExistsError:  # made meanwhile by someone else: theirs stays
                done.skipped.append(relative)
                continue
            done.written.append(relative)
    except OSError as exc:
        for relative in done.written:
            (target / relative).unlink(missing_ok=True)
        raise UserError(f"{exc.filename or target}: {exc.strerror or exc}; nothing written") from None
    return done


def _check_target(target: Path, *, force: bool) -> None:
    if os.path.lexists(target) and not target.is_dir():
        raise UserError(f"{target}: not a folder; expected a new or empty folder for the wiki")
    entries = sorted(os.listdir(target)) if target.is_dir() else []
    if entries and not force:
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        raise UserError(f"{target}: not empty ({shown}); expected a new or empty folder, or --force to add "
                        f"only the files it lacks (none is overwritten)")
