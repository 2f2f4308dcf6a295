"""`tooling serve`'s builds after the first make only the pages an edit changed (mkdocs serve
--dirty, made whole by tooling.site.incremental), and leave the site a full build leaves: every
file of both editions, the search indexes, the tags page and each page's navigation the same,
byte for byte, as the full build that `tooling serve` made of each change before.

The builds are made as mkdocs serve makes them (its builder: the configuration read again, the
server's address as site_url, one process for all the builds, so that the plugins keep what
they learnt), in a child process fed one line per build; the full build of each state in a
fresh process. Between builds the pages are rendered by the real `tooling build --render-only`.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterator

import pytest

from site_support import NOW, copy_project

URL = "http://127.0.0.1:8123/"
# mkdocs serve's builder (mkdocs/commands/serve.py), one build per line read; static-i18n reads
# the --dirty flag from sys.argv, as under `tooling serve` (tooling/site/listen.py)
BUILDER = """
import sys
site, dirty, url = sys.argv[1], sys.argv[2] == "dirty", sys.argv[3]
sys.argv = ["mkdocs", "serve"] + (["--dirty"] if dirty else [])
from mkdocs.commands.build import build
from mkdocs.config import load_config

def config():
    loaded = load_config("mkdocs.yml", site_dir=site)
    loaded.site_url = url
    return loaded

first = config()
first.plugins.on_startup(command="serve", dirty=dirty)
for n, line in enumerate(sys.stdin):
    build(first if n == 0 else config(), serve_url=url, dirty=dirty)
    print("built", flush=True)
"""


class Builder:
    """A child process making the builds of one `tooling serve`."""

    def __init__(self, root: Path, site: Path, mode: str) -> None:
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true",
               "SOURCE_DATE_EPOCH": "1764417600"}
        self.process = subprocess.Popen([sys.executable, "-c", BUILDER, str(site), mode, URL], cwd=root, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)

    def build(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("build\n")
        self.process.stdin.flush()
        said = self.process.stdout.readline()
        if said != "built\n":
            self.process.kill()
            out, err = self.process.communicate()  # what it said instead of "built", and its errors
            raise AssertionError(f"the build failed (exit {self.process.returncode}), said {said!r} then "
                                 f"{out[-2000:]!r}:\n{err[-4000:]}")

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def _render(root: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "tooling", "build", "--render-only", "--now", NOW], cwd=root,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


def _files(site: Path) -> dict[str, bytes]:
    """Every file of a built site but the compressed sitemap (gzip stamps it with the time)."""
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*")
            if p.is_file() and p.suffix != ".gz"}


def _full(root: Path, site: Path) -> dict[str, bytes]:
    """The site a full build makes of the repository as it is."""
    builder = Builder(root, site, "full")
    try:
        builder.build()
    finally:
        builder.close()
    return _files(site)


def _edit(path: Path, pattern: str, replacement: str) -> None:
    text = path.read_text(encoding="utf-8")
    edited = re.sub(pattern, replacement, text, count=1, flags=re.M)
    assert edited != text, f"{pattern} not in {path}"
    path.write_text(edited, encoding="utf-8")


@pytest.fixture(scope="module")
def serving(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, Builder]]:
    root = copy_project(tmp_path_factory.mktemp("served"))
    _render(root)
    site = root / "served-site"
    builder = Builder(root, site, "dirty")
    builder.build()
    yield root, site, builder
    builder.close()


# Each edit, with the pages it must make again (as the path of their HTML in the site).
EDITS: list[tuple[str, Callable[[Path], None], list[str]]] = [
    ("an incident's root cause", lambda root: _edit(root / "incidents" / "INC-0007.yaml",
                                                     r"^(root_cause: >-\n +)", r"\1Found again. "),
     ["generated/incidents/INC-0007/index.html", "ko/generated/incidents/INC-0007/index.html"]),
    ("an incident's title and severity: the tags page lists it", lambda root: (
        _edit(root / "incidents" / "INC-0003.yaml", r"^title: ", "title: Renamed, "),
        _edit(root / "incidents" / "INC-0003.yaml", r"^severity: \S+", "severity: sev4")),
     ["generated/incidents/INC-0003/index.html", "generated/tags/index.html", "ko/generated/tags/index.html"]),
    ("the run: the home page includes its card", lambda root: _edit(
        root / "runbooks" / "runs" / "demo-7b.yaml", r"^updated_at: .*$", "updated_at: 2026-11-29T11:00:00+00:00"),
     ["index.html", "ko/index.html", "generated/runs/demo-7b/index.html"]),
    ("a hand-written page's heading", lambda root: _edit(root / "docs" / "playbook" / "budget.md", r"^# ", "# The "),
     ["playbook/budget/index.html"]),
    ("an incident removed, another added: the navigation changes", lambda root: (
        (root / "incidents" / "INC-0015.yaml").rename(root / "incidents" / "INC-0016.yaml"),
        _edit(root / "incidents" / "INC-0016.yaml", r"^id: INC-0015", "id: INC-0016")),
     ["generated/incidents/INC-0016/index.html", "ko/generated/incidents/INC-0016/index.html"]),
]


@pytest.mark.parametrize("what, edit, made", EDITS, ids=[e[0] for e in EDITS])
def test_a_build_after_an_edit_makes_the_site_a_full_build_makes(
        serving: tuple[Path, Path, Builder], tmp_path: Path, what: str, edit: Callable[[Path], None],
        made: list[str]) -> None:
    root, site, builder = serving
    edit(root)
    _render(root)
    before = {p: p.stat().st_mtime_ns for p in site.rglob("*.html")}
    builder.build()
    rebuilt = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                     if before.get(p) != p.stat().st_mtime_ns)
    assert set(made) <= set(rebuilt), rebuilt
    if "navigation" not in what:  # a change of the navigation changes every page
        assert len(rebuilt) < len(before) / 4, rebuilt
    served, full = _files(site), _full(root, tmp_path / "full")
    assert sorted(served) == sorted(full)
    assert [name for name in sorted(full) if served[name] != full[name]] == []
