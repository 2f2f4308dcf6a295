"""`tooling build` reads mkdocs.yml once and asks git once: what it read is handed down to every
step (the site folder, the editions, the pages' sources, mkdocs itself), and one `git log` dates
both the records and the labs (it read the file five times and started git four times)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import snapshot, tooling

NOW = "2026-11-30T12:00:00+00:00"
MKDOCS = """site_name: test
validation:
  links:
    not_found: info
exclude_docs: |
  generated/home-cards*.md
  generated/paged*.md
  generated/lookup*.md
"""
# The real CLI in a process of its own, counting as it runs: each opening of a file named
# mkdocs.yml, and each git process started (the audit events every open() and Popen raise).
COUNTED = """
import json, os, sys
counts = {"mkdocs.yml": 0, "git": 0}

def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        counts["mkdocs.yml"] += os.path.basename(os.fsdecode(args[0])) == "mkdocs.yml"
    elif event == "subprocess.Popen":
        program = args[0] if args[0] is not None else args[1][0]
        counts["git"] += os.path.basename(os.fsdecode(program)) == "git"

sys.addaudithook(hook)
from tooling.main import main
code = main(sys.argv[1:])
print(json.dumps(counts), file=sys.stderr)
sys.exit(code)
"""


@pytest.fixture
def project(repo: Path) -> Path:
    """The test corpus with a page and a lab, committed: git has a history to tell."""
    (repo / "mkdocs.yml").write_text(MKDOCS)
    (repo / "docs").mkdir()
    (repo / "docs" / "index.md").write_text("# Home\n")
    (repo / "labs" / "01-first").mkdir(parents=True)
    (repo / "labs" / "README.md").write_text("# Labs\n")
    (repo / "labs" / "01-first" / "README.md").write_text("# First lab\n")
    git = ["git", "-c", "user.name=Dana Reads", "-c", "user.email=dana@test", "-C", str(repo)]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "records to build", "--date", "2026-11-02T10:00:00+00:00"],
                   check=True, env={**os.environ, "GIT_COMMITTER_DATE": "2026-11-02T10:00:00+00:00"})
    return repo


@pytest.mark.slow  # ~2 s: a build through the executable
@pytest.mark.parametrize("args", [[], ["--render-only"]])
def test_a_build_reads_mkdocs_yml_once_and_starts_git_once(project: Path, args: list[str]) -> None:
    result = subprocess.run([sys.executable, "-c", COUNTED, "--now", NOW, "build", *args], cwd=project,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stderr.splitlines()[-1]) == {"mkdocs.yml": 1, "git": 1}
    generated = project / "docs" / "generated"
    incident = (generated / "incidents" / "INC-0001.md").read_text()  # what that one git log told
    assert "Last changed 2026-11-02 10:00 UTC by Dana Reads." in incident
    assert 'revision_date: "2026-11-02 10:00 UTC"' in (generated / "labs" / "01-first.md").read_text()
    assert (project / "site" / "index.html").is_file() == (args == [])


def test_a_mkdocs_yml_that_does_not_parse_is_one_located_line_and_changes_nothing(project: Path) -> None:
    (project / "mkdocs.yml").write_text("site_name: test\nnav: [index.md\n")
    before = snapshot(project)
    result = tooling("--now", NOW, "build", cwd=project)
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "", "tooling: error: mkdocs.yml:3:1: [yaml-syntax] expected ',' or ']', but got '<stream end>' "
               "(while parsing a flow sequence); expected valid YAML\n")
    assert snapshot(project) == before
