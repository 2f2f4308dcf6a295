"""Where the playbook this package ships lives: its pages (``docs/``), its ladders and stack
(``runbooks/``), the lab pages' READMEs and its bundled example records, laid out as in this
repository.

Installed from a wheel, they are package data under ``tooling/playbook/``, copied there from the
checkout when the wheel is built (setup.py, by :data:`SHIPPED`); run from a checkout (an editable
install, the tests), they are the checkout itself, so nothing lives twice. A team's repository
reads these and overrides any piece by a file of the same path (or a record of the same id) of
its own (:func:`layered`; records: tooling.records.layout).

Only the standard library here: setup.py loads this file by its path while building a wheel.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

PACKAGED = "playbook"  # tooling/playbook/: the folder the wheel carries them in
# What the wheel carries, as globs from the checkout's root: the pages in both languages, their
# assets, navigation and theme overrides; the ladders and the stack with their translations; the
# labs' READMEs and charts (the lab pages of the site); the example records `tooling init --demo`
# writes. MANIFEST.in puts the same folders in the sdist.
SHIPPED = ("docs/**/*", "runbooks/ladders/*.yaml", "runbooks/stack*.yaml", "runbooks/runs/*.yaml",
           "incidents/*.yaml", "labs/README*.md", "labs/*/README*.md", "labs/*/*.svg")
NOT_SHIPPED = ("docs/generated/",)  # written by `tooling build` in each repository, never shipped


def shipped_files(checkout: Path) -> list[str]:
    """The files of ``checkout`` that the wheel carries (paths relative to it, '/' separators),
    hidden files and what `tooling build` writes left out."""
    found: set[str] = set()
    for pattern in SHIPPED:
        for path in checkout.glob(pattern):
            relative = path.relative_to(checkout).as_posix()
            hidden = any(part.startswith(".") or part == "__pycache__" for part in relative.split("/"))
            if path.is_file() and not hidden and not relative.startswith(NOT_SHIPPED):
                found.add(relative)
    return sorted(found)


@lru_cache(maxsize=None)
def shipped_root() -> Path:
    """The folder holding the shipped ``docs/`` and ``runbooks/``: the package data folder in an
    installed wheel, else the checkout above the ``tooling`` package."""
    package = Path(__file__).resolve().parents[1]
    packaged = package / PACKAGED
    if (packaged / "docs").is_dir():
        return packaged
    checkout = package.parent
    assert (checkout / "docs").is_dir() and (checkout / "runbooks").is_dir(), \
        f"neither {packaged} nor {checkout} holds the shipped playbook (docs/ and runbooks/)"
    return checkout


def is_shipped(root: Path) -> bool:
    """Whether ``root`` is the shipped playbook itself (this repository, dogfooding it)."""
    return root.resolve() == shipped_root()


# A repository takes the shipped playbook by naming its mkdocs plugin (tooling.site.playbook): a
# line "- playbook" (or "- playbook:" with options) under plugins in mkdocs.yml
_NAMES_PLUGIN = re.compile(r"^\s*-\s*[\"']?playbook[\"']?\s*(?::.*)?(?:#.*)?$", re.MULTILINE)


def takes_shipped(root: Path) -> bool:
    """Whether the repository at ``root`` reads the shipped ladders and stack beside its own: its
    mkdocs.yml names the `playbook` plugin, and it is not the shipped playbook itself."""
    config = root / "mkdocs.yml"
    try:
        stat = config.stat()
    except OSError:
        return False
    key = (os.path.abspath(config), stat.st_mtime_ns, stat.st_size)  # keyed by its change: `serve` reads it again
    names = _NAMES.get(key)
    if names is None:
        try:
            text = config.read_bytes()
        except OSError:
            return False
        note_config(config, text)
        names = _names_plugin(text)  # from the bytes read, even if the file changed since its stat
    return names and not is_shipped(root)


_NAMES: dict[tuple[str, int, int], bool] = {}  # mkdocs.yml as read: whether it names the plugin


def note_config(config: Path, text: bytes) -> None:
    """mkdocs.yml's bytes as they were read (by :func:`takes_shipped`, or once by a build:
    tooling.site.config), so that a build reads the file once."""
    try:
        stat = config.stat()
    except OSError:
        return
    if len(_NAMES) > 64:
        _NAMES.clear()
    if stat.st_size == len(text):  # else it changed since: the next question reads it again
        _NAMES[(os.path.abspath(config), stat.st_mtime_ns, stat.st_size)] = _names_plugin(text)


def _names_plugin(text: bytes) -> bool:
    return _NAMES_PLUGIN.search(text.decode("utf-8", errors="replace")) is not None


def layered(root: Path, relative: str) -> Path:
    """The file or folder at ``relative`` in the repository ``root`` where it has one, else the
    shipped one (which may not exist either)."""
    own = root / relative
    return own if own.exists() else shipped_root() / relative
