"""Publishing a version of the site with mike: the wiki as it stood at each milestone."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Iterator

from tooling.errors import UsageError, UserError
from tooling.site.build import DOC_FILE, MKDOCS_ENV, render_site
from tooling.site.config import read_site_config


# The version selector asks the server for ../versions.json, which only mike's pages branch has:
# a site built by `tooling build` or served locally would request it and get a 404. So the
# selector is switched on here, for the copies mike publishes, and nowhere else.
PUBLISHED_EXTRA = "extra:\n  version:\n    provider: mike\n"


@contextmanager
def published_config(root: Path) -> Iterator[Path]:
    """A config file beside mkdocs.yml that inherits it and adds the version selector; removed
    afterwards. (Beside it, because mkdocs resolves docs_dir and custom_dir from the file.) Its
    site_dir is a temporary folder: mike builds there, and the user's site/ is left alone."""
    with tempfile.TemporaryDirectory(prefix="tooling-publish-") as site_dir, \
            tempfile.NamedTemporaryFile("w", dir=root, prefix=".tooling-publish-", suffix=".yml",
                                        delete=False, encoding="utf-8") as handle:
        handle.write(f"INHERIT: mkdocs.yml\nsite_dir: {json.dumps(site_dir)}\n{PUBLISHED_EXTRA}")
        handle.close()
        try:
            yield Path(handle.name)
        finally:
            os.unlink(handle.name)


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)


def check_repository(root: Path, *, branch: str, push: bool) -> str | None:
    """Refuse, before anything is rendered, what mike would fail on half-way; returns the
    commit ``branch`` is at now (None: no such branch yet), to put it back if publishing fails."""
    try:
        inside = _git(root, "rev-parse", "--is-inside-work-tree")
    except FileNotFoundError:
        raise UserError("git: not installed; expected git on PATH (mike publishes to a git branch)") from None
    if inside.returncode != 0:
        raise UserError(f"{root}: not a git repository; expected a clone to publish from "
                        "(mike commits the site to a branch of it)")
    if _git(root, "check-ref-format", "--branch", branch).returncode != 0 or branch.startswith("-"):
        raise UsageError(f"--branch {branch}: not a valid branch name; expected a name such as gh-pages")
    if push and _git(root, "remote", "get-url", "origin").returncode != 0:
        raise UserError("--push: this repository has no remote 'origin' to push to; expected "
                        "`git remote add origin URL` first, or publish without --push")
    for ref in (f"refs/heads/{branch}", f"refs/remotes/origin/{branch}"):
        _refuse_a_branch_not_by_mike(root, branch, ref)
    head = _git(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")
    return head.stdout.strip() or None


def _refuse_a_branch_not_by_mike(root: Path, branch: str, ref: str) -> None:
    """mike deploys onto whatever the branch holds, replacing its index.html: a branch someone
    made by hand (a project page, another tool's site) would be overwritten, with exit 0. A
    branch is mike's when its tip has mike's versions.json (a list of versions with aliases)."""
    if _git(root, "rev-parse", "--verify", "--quiet", ref).returncode != 0:
        return  # no such branch: mike makes it
    shown = _git(root, "show", f"{ref}:versions.json")
    try:
        versions = json.loads(shown.stdout) if shown.returncode == 0 else None
    except (ValueError, RecursionError):
        versions = None
    if not (isinstance(versions, list) and all(isinstance(v, dict) and isinstance(v.get("version"), str)
                                               and isinstance(v.get("aliases"), list) for v in versions)):
        where = branch if ref.startswith("refs/heads/") else f"origin/{branch}"
        raise UserError(f"--branch {branch}: {where} exists and was not made by mike (no mike versions.json at "
                        "its tip), so publishing would replace its pages; expected a branch mike made or a new "
                        "one, e.g. --branch site-versions")


def _restore(root: Path, branch: str, commit: str | None) -> None:
    """Put ``branch`` back where it was: mike commits before it pushes, so a failed push would
    leave a version on it that the error says was not published. Only mike's one commit on top
    of ``commit`` is taken back: a version another publish added meanwhile stays."""
    ref = f"refs/heads/{branch}"
    now = _git(root, "rev-parse", "--verify", "--quiet", ref).stdout.strip()
    parent = _git(root, "rev-parse", "--verify", "--quiet", f"{now}^").stdout.strip() or None if now else None
    if not now or now == commit or parent != commit:
        return
    # compare-and-swap on the ref: untouched if it moved since it was read
    _git(root, "update-ref", *(["-d", ref, now] if commit is None else [ref, commit, now]))


def _mike(root: Path, config: Path, *args: str) -> None:
    # mike runs `mkdocs` itself: make this environment's mkdocs the one it finds.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           **MKDOCS_ENV}
    mike = str(Path(sys.executable).parent / "mike")
    result = subprocess.run([mike, *args, "--config-file", str(config)],
                            cwd=root, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise UserError(f"mike {args[0]} failed: {_mike_error(result.stderr)}")


def _mike_error(stderr: str) -> str:
    """mike's own error with the build's warnings before it (mkdocs' strict mode fails on them),
    without the rest of the build log; one line per problem."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    first = next((i for i, line in enumerate(lines) if line.startswith("error:")), len(lines))
    warned = [re.sub(r"^(WARNING|ERROR)\s*-\s*", "", line) for line in lines[:first]
              if line.startswith(("WARNING", "ERROR"))]
    error = " ".join(lines[first:]) or (lines[-1] if lines else "(no message)")
    located = [f"docs/{m[1]}: {m[2]}" if (m := DOC_FILE.match(w)) else w for w in warned]
    return "\n".join([*located, error])


def publish(root: Path, *, version: str, alias: str, now: datetime, push: bool,
            branch: str = "gh-pages", set_default: bool = True) -> None:
    """Render the pages, deploy them as ``version`` with ``alias``; optionally make that the
    default. On a failure the branch is put back as it was."""
    before = check_repository(root, branch=branch, push=push)
    render_site(root, now=now, site=read_site_config(root))
    push_args = ["--push"] if push else []
    with published_config(root) as config:
        try:
            _mike(root, config, "deploy", "--update-aliases", "--branch", branch, *push_args, version, alias)
        except BaseException:
            _restore(root, branch, before)
            raise
        if set_default:  # the version is published (and pushed) by now: no going back from here
            _mike(root, config, "set-default", "--branch", branch, *push_args, alias)
