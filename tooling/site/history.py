"""Who changed which file the site shows and when: the records (each record page's history note
and date) and the labs' READMEs (their pages' dates), read from git in one `git log` per build."""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tooling.records.layout import record_dirs

_SEP = "\x1f"
LABS = "labs"  # the labs' folder: its pages are copied from READMEs there (tooling.site.labs)


@dataclass(frozen=True)
class Change:
    sha: str
    author: str
    date: str  # ISO 8601 with offset, as git prints it
    subject: str


def site_history(root: Path) -> dict[str, list[Change]]:
    """{absolute path (under ``os.path.abspath(root)``): changes, newest first} for every record
    file and every file under labs/; empty outside a git work tree or before its first commit."""
    folders = [d.relative_to(root).as_posix() for d in record_dirs(root)] + ([LABS] if (root / LABS).is_dir() else [])
    if not folders:
        return {}
    # --relative: paths from root, which may be a folder inside the work tree; quotePath off: a
    # name outside ASCII is written as it is, not as a quoted escape that names no file
    command = ["git", "-c", "core.quotePath=false", "log", "--relative", "--name-only", "--no-renames",
               f"--format=@@{_SEP}%H{_SEP}%an{_SEP}%aI{_SEP}%s", "--", *folders]
    try:
        done = subprocess.run(command, cwd=root, capture_output=True, encoding="utf-8", errors="replace")
    except OSError:  # no git
        return {}
    if done.returncode != 0:  # not a repository, or no commits yet: pages say so instead
        return {}
    top = os.path.abspath(root)
    history: dict[str, list[Change]] = {}
    change: Change | None = None
    for line in done.stdout.splitlines():
        if line.startswith("@@" + _SEP):
            _, sha, author, when, subject = line.split(_SEP, 4)
            change = Change(sha[:10], author, when, subject)
        elif line.strip() and change is not None:
            history.setdefault(os.path.normpath(os.path.join(top, line.strip())), []).append(change)
    return history
