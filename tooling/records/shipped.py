"""Where the playbook this package ships lives: its pages (``docs/``), its ladders and stack
(``runbooks/``) and its bundled example records, laid out as in this repository.

Installed from a wheel, they are package data under ``tooling/playbook/``, copied there from the
checkout when the wheel is built; run from a checkout (an editable install, the tests), they are
the checkout itself, so nothing lives twice. A team's repository reads these and overrides any
piece by a file of the same path (or a record of the same id) of its own.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

PACKAGED = "playbook"  # tooling/playbook/: the folder the wheel carries them in


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
