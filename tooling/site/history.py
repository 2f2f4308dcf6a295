"""Who changed which record and when, read from git with GitPython in one pass."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tooling.records.layout import record_dirs

_SEP = "\x1f"


@dataclass(frozen=True)
class Change:
    sha: str
    author: str
    date: str  # ISO 8601 with offset, as git prints it
    subject: str


def record_history(root: Path) -> dict[str, list[Change]]:
    """{absolute path: changes, newest first} for every record file; empty outside a git work tree."""
    try:
        import git
        repo = git.Repo(root, search_parent_directories=True)
        top = Path(repo.working_tree_dir or root)
        folders = [str(d) for d in record_dirs(root)]
        if not folders:
            return {}
        out = repo.git.log("--name-only", "--no-renames", f"--format=@@{_SEP}%H{_SEP}%an{_SEP}%aI{_SEP}%s",
                           "--", *folders)
    except Exception:  # no git, not a repository, or no commits yet: pages say so instead
        return {}
    history: dict[str, list[Change]] = {}
    change: Change | None = None
    for line in out.splitlines():
        if line.startswith("@@" + _SEP):
            _, sha, author, when, subject = line.split(_SEP, 4)
            change = Change(sha[:10], author, when, subject)
        elif line.strip() and change is not None:
            history.setdefault(os.path.normpath(top / line.strip()), []).append(change)
    return history
