"""`tooling publish` refuses, in one line and before rendering, what mike would fail on half-way
(no git, a bad branch name, --push without a remote); a failed push leaves the pages branch as
it was; and mike's build never replaces the user's site/."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support import snapshot, tooling

NOW = "2026-11-30T12:00:00+00:00"
MKDOCS = "site_name: test\ntheme:\n  name: material\nvalidation:\n  links:\n    not_found: info\nexclude_docs: |\n  generated/home-cards*.md\n  generated/paged*.md\n  generated/lookup*.md\n"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def project(repo: Path) -> Path:
    (repo / "mkdocs.yml").write_text(MKDOCS)
    (repo / "docs").mkdir()
    (repo / "docs" / "index.md").write_text("# Home\n")
    (repo / ".gitignore").write_text("site/\ndocs/generated/\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "records")
    return repo


def test_outside_git_it_says_so_and_writes_nothing(project: Path) -> None:
    subprocess.run(["rm", "-rf", str(project / ".git")], check=True)
    before = snapshot(project)
    result = tooling("--now", NOW, "publish", "0.1", cwd=project)
    assert result.returncode == 1
    assert result.stderr == (f"tooling: error: {project}: not a git repository; expected a clone to publish "
                             "from (mike commits the site to a branch of it)\n")
    assert snapshot(project) == before


def test_a_bad_branch_name_is_a_usage_error(project: Path) -> None:
    result = tooling("--now", NOW, "publish", "0.1", "--branch", "bad..name", cwd=project)
    assert result.returncode == 2
    assert result.stderr == "tooling: error: --branch bad..name: not a valid branch name; expected a name such as gh-pages\n"


def test_push_without_a_remote_is_refused_before_rendering(project: Path) -> None:
    before = snapshot(project)
    result = tooling("--now", NOW, "publish", "0.1", "--push", cwd=project)
    assert result.returncode == 1
    assert result.stderr == ("tooling: error: --push: this repository has no remote 'origin' to push to; expected "
                             "`git remote add origin URL` first, or publish without --push\n")
    assert snapshot(project) == before


def test_a_failed_push_leaves_the_pages_branch_and_site_as_they_were(project: Path, tmp_path: Path) -> None:
    assert tooling("--now", NOW, "build", cwd=project).returncode == 0
    site = snapshot(project / "site")
    published = tooling("--now", NOW, "publish", "0.1", cwd=project, env={"GIT_AUTHOR_NAME": "t",
                        "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})
    assert published.returncode == 0, published.stderr
    assert snapshot(project / "site") == site  # mike built elsewhere, not over site/
    branch = _git(project, "rev-parse", "gh-pages")
    _git(project, "remote", "add", "origin", str(tmp_path / "no-such-remote"))
    result = tooling("--now", NOW, "publish", "0.2", "--push", cwd=project, env={"GIT_AUTHOR_NAME": "t",
                     "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})
    assert result.returncode == 1
    assert result.stderr == (
        f"tooling: error: mike deploy failed: error: failed to push branch gh-pages to origin: fatal: "
        f"'{tmp_path}/no-such-remote' does not appear to be a git repository fatal: Could not read from remote "
        "repository. Please make sure you have the correct access rights and the repository exists.\n")
    assert _git(project, "rev-parse", "gh-pages") == branch
    assert _git(project, "ls-tree", "--name-only", "gh-pages").split() == [
        ".nojekyll", "0.1", "index.html", "latest", "versions.json"]


@pytest.mark.parametrize("tip", ["no-versions", "other-versions"])
def test_a_pages_branch_mike_did_not_make_is_refused_and_left_as_it_was(project: Path, tip: str) -> None:
    """mike deployed over a hand-made gh-pages, replacing its index.html, and said exit 0."""
    pages = {"index.html": "<h1>The project page</h1>\n", "CNAME": "docs.example.org\n"}
    if tip == "other-versions":  # another tool's versions.json is not mike's list of versions
        pages["versions.json"] = '{"latest": "1.2"}\n'
    entries = "".join(f"100644 blob {_blob(project, text)}\t{name}\n" for name, text in pages.items())
    tree = subprocess.run(["git", "mktree"], cwd=project, input=entries, check=True, capture_output=True,
                          text=True).stdout.strip()
    _git(project, "update-ref", "refs/heads/gh-pages", _git(project, "commit-tree", tree, "-m", "The project page"))
    branch = _git(project, "rev-parse", "gh-pages")
    before = snapshot(project)
    result = tooling("--now", NOW, "publish", "0.1", cwd=project)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == ("tooling: error: --branch gh-pages: gh-pages exists and was not made by mike (no mike "
                             "versions.json at its tip), so publishing would replace its pages; expected a branch "
                             "mike made or a new one, e.g. --branch site-versions\n")
    assert _git(project, "rev-parse", "gh-pages") == branch
    assert snapshot(project) == before


def _blob(root: Path, text: str) -> str:
    return subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=root, input=text, check=True,
                          capture_output=True, text=True).stdout.strip()
