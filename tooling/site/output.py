"""Where the built site goes: a fresh folder beside the site folder, swapped in only when whole.

mkdocs empties its site folder and then writes into it, so a build that failed (a strict
warning, a full disk, a SIGKILL) left half a site or none, and ``--site-dir incidents`` emptied
the records. Here mkdocs writes into ``.<name>.tooling-<pid>-<random>`` beside the site folder;
only a build that passed every check replaces the old site, in one rename(2) (RENAME_EXCHANGE
where the file system has it), so a reader or a killed build sees the old site or the new one,
never a mix. A folder that holds anything but a site is never replaced.
"""
from __future__ import annotations

import ctypes
import errno
import os
import shutil
import tempfile
from pathlib import Path

from tooling.errors import UsageError
from tooling.fs.writers import writer_alive
from tooling.site.config import SiteConfig

_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100
_SITE_FILES = ("index.html", "sitemap.xml")  # what every mkdocs build of this project writes


def _tag(target: Path) -> str:
    return f".{target.name}.tooling-"


def site_target(root: Path, site_dir: Path | None, site: SiteConfig) -> Path:
    """The site folder a build replaces, checked (see :func:`check_site_dir`): ``site_dir``
    (relative to the working folder, as a shell user means it), else mkdocs.yml's (``site``),
    else site/."""
    config = site.data
    config_dir = root.resolve()
    docs_dir = config_dir / str(config.get("docs_dir") or "docs")
    target = Path(site_dir).resolve() if site_dir else config_dir / str(config.get("site_dir") or "site")
    shown = f"--site-dir {site_dir}" if site_dir else f"{root / 'mkdocs.yml'}: site_dir {target}"
    check_site_dir(target, config_dir=config_dir, docs_dir=docs_dir.resolve(), shown=shown)
    return target


def check_site_dir(target: Path, *, config_dir: Path, docs_dir: Path, shown: str) -> None:
    """Refuse a site folder whose replacement would lose something: the repository, the docs,
    a file, or a folder holding anything but a site built before (``shown``: how to name it)."""
    expected = "expected a new or empty folder, or a site built before, such as site/"
    if target == Path(target.anchor) or target in (config_dir, *config_dir.parents, docs_dir, *docs_dir.parents):
        raise UsageError(f"{shown}: the site would replace a folder that holds the docs folder ({docs_dir}); {expected}")
    if docs_dir in target.parents:
        raise UsageError(f"{shown}: inside the docs folder ({docs_dir}); {expected}")
    if target.exists() and not target.is_dir():
        raise UsageError(f"{shown}: a file, not a folder; {expected}")
    if target.is_dir() and any(target.iterdir()) and not all((target / f).is_file() for f in _SITE_FILES):
        first = sorted(p.name for p in target.iterdir())[0]
        raise UsageError(f"{shown}: holds files that are not a built site (such as {first}); {expected}")


def new_build_dir(target: Path) -> Path:
    """An empty folder beside ``target`` for mkdocs to build into; first removes those that
    builds killed before they could clean up (their process is gone)."""
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        _remove_orphans(target)
        return Path(tempfile.mkdtemp(prefix=f"{_tag(target)}{os.getpid()}-", dir=parent))
    except OSError as exc:  # name the folder asked for, not the temporary one
        raise OSError(exc.errno, exc.strerror, str(target)) from None


def _remove_orphans(target: Path) -> None:
    for path in target.parent.glob(f"{_tag(target)}*"):
        pid = path.name[len(_tag(target)):].split("-", 1)[0]
        if pid.isdigit() and not writer_alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def swap_in(built: Path, target: Path) -> None:
    """Make ``built`` the site at ``target`` in one step; the old site is removed after."""
    if _exchange(built, target):
        shutil.rmtree(built, ignore_errors=True)  # now holds the old site
        return
    if not target.exists():
        os.replace(built, target)
        return
    # no RENAME_EXCHANGE here: two renames, and the old site put back if the second fails
    old = Path(tempfile.mkdtemp(prefix=f"{_tag(target)}{os.getpid()}-old-", dir=target.parent))
    os.replace(target, old / "site")
    try:
        os.replace(built, target)
    except BaseException:
        os.replace(old / "site", target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _exchange(built: Path, target: Path) -> bool:
    """renameat2(RENAME_EXCHANGE); False where the target is missing or the call unsupported."""
    if not target.exists():
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    if renameat2(_AT_FDCWD, os.fsencode(built), _AT_FDCWD, os.fsencode(target), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOENT, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(target))


def discard(built: Path) -> None:
    shutil.rmtree(built, ignore_errors=True)
