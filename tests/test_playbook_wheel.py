"""The wheel carries the playbook as package data built from this repository's folders (setup.py,
tooling/records/shipped.py): the pages in both languages, the ladders, the stack, the lab pages'
READMEs and the bundled example records under tooling/playbook/, and nothing `tooling build`
writes. Built from a copy of the checkout, so that the build's own folders never land in it."""
from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from support import PROJECT

# What a build needs; the tests, corpora, the site and the virtualenv stay behind
TOP_LEFT = {".venv", ".git", ".hypothesis", ".pytest_cache", "tests", "site", "build"}


def _left(folder: str, names: list[str]) -> set[str]:
    top = Path(folder) == PROJECT
    return {n for n in names if (top and n in TOP_LEFT) or n == "__pycache__" or n.endswith(".egg-info")
            or (Path(folder) == PROJECT / "docs" and n == "generated")}


@pytest.mark.slow
def test_the_wheel_carries_the_shipped_playbook_and_nothing_generated(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(PROJECT, source, ignore=_left)
    (source / "docs" / "generated").mkdir()  # as a checkout that has built its site has it
    (source / "docs" / "generated" / "stack.md").write_text("# written by tooling build\n", encoding="utf-8")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path / "dist"), str(source)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "dist").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {n.removeprefix("tooling/playbook/") for n in names if n.startswith("tooling/playbook/")}

    def checkout(pattern: str) -> set[str]:
        return {p.relative_to(PROJECT).as_posix() for p in PROJECT.glob(pattern)}

    for pattern in ("docs/playbook/*.md", "docs/*.md", "runbooks/ladders/*.yaml", "runbooks/stack*.yaml",
                    "runbooks/runs/*.yaml", "incidents/*.yaml", "labs/*/README*.md", "docs/overrides/**/*.html",
                    "docs/assets/javascripts/*.js", "docs/assets/vendor/tablesort/*.js"):
        expected = checkout(pattern)
        assert expected and expected <= shipped, (pattern, sorted(expected - shipped))
    assert any(n.endswith(".ko.md") for n in shipped) and "docs/SUMMARY.ko.md" in shipped
    assert not [n for n in shipped if n.startswith("docs/generated")]
    assert not [n for n in shipped if n.startswith(("tests/", "labs/")) and not n.endswith((".md", ".svg"))]
    assert {"tooling/site/playbook.py", "tooling/records/shipped.py"} <= names
    # the plugin that brings them into a team's site is registered
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "playbook = tooling.site.playbook:Playbook" in zipfile.ZipFile(wheel).read(entry_points).decode()
