"""A build never leaves the site or the generated pages half written (issue 21, defect 1).

The Korean repeats page failed to render after every English page had been written: the English
pages showed the new records, the Korean ones the old. Now every page of every edition renders
before any is written, so a page that fails leaves docs/generated/ and site/ byte for byte as
they were; and a write that fails (a full disk) replaces no page either.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from render_fault import ERROR, MARKER, faulty_tooling
from support import snapshot, tmpfs, tooling
from tooling.site.pages import GENERATED_DIR

NOW = "2026-11-30T12:00:00+00:00"
# The tiny site of tests/test_build_output.py, in two editions.
MKDOCS = """site_name: test
validation:
  links:
    not_found: info
exclude_docs: |
  generated/home-cards*.md
  generated/paged*.md
  generated/lookup*.md
plugins:
  - i18n:
      docs_structure: suffix
      languages:
        - {locale: en, default: true, name: English}
        - {locale: ko, name: 한국어, theme: {locale: en}}  # mkdocs' own theme has no Korean words
"""


@pytest.fixture
def project(repo: Path) -> Path:
    (repo / "mkdocs.yml").write_text(MKDOCS, encoding="utf-8")
    (repo / "docs").mkdir()
    (repo / "docs" / "index.md").write_text("# Home\n")
    return repo


def _retitle(root: Path, title: str) -> None:
    """A change that reaches many pages of both editions: the incident's, the log, the tags."""
    path = root / "incidents" / "INC-0001.yaml"
    text, count = re.subn(r"^title: .*$", f"title: {title}", path.read_text(encoding="utf-8"), count=1, flags=re.M)
    assert count == 1
    path.write_text(text, encoding="utf-8")


def _outputs(root: Path) -> dict[str, bytes]:
    return {f"{name}/{path}": data for name in (GENERATED_DIR, "site")
            for path, data in snapshot(root / name).items()}


def test_a_page_that_fails_to_render_leaves_the_pages_and_the_site_as_they_were(project: Path, tmp_path: Path) -> None:
    built = tooling("--now", NOW, "build", cwd=project, timeout=120)
    assert built.returncode == 0, built.stderr
    _retitle(project, f"Xid 79 on node042 again {MARKER}")
    before = _outputs(project)
    assert any(p.endswith("INC-0001.ko.md") for p in before) and any(p.startswith("site/ko/") for p in before)
    failed = subprocess.run(faulty_tooling("--now", NOW, "build"), cwd=project, capture_output=True, text=True,
                            timeout=120, env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")})
    log = tmp_path / "cache" / "tooling" / "tooling.log"
    assert failed.stderr == f"tooling: internal error: {ERROR}; the traceback is in {log} (please report it)\n"
    assert failed.returncode == 3
    assert _outputs(project) == before  # not the English pages new and the Korean ones old
    assert not [p for p in project.rglob("*") if p.name.endswith(".tmp") or ".tooling-" in p.name]
    _retitle(project, "Xid 79 on node042 again")  # the record that broke it fixed: all pages new
    assert tooling("--now", NOW, "build", cwd=project, timeout=120).returncode == 0
    for page in ("INC-0001.md", "INC-0001.ko.md"):
        assert "Xid 79 on node042 again" in (project / GENERATED_DIR / "incidents" / page).read_text(encoding="utf-8")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None, reason="mounts a small tmpfs: root only")
def test_a_full_disk_while_writing_pages_replaces_none_of_them(project: Path, tmp_path: Path) -> None:
    generated = project / GENERATED_DIR
    with tmpfs(generated, "2m"):
        assert tooling("--now", NOW, "build", "--render-only", cwd=project).returncode == 0
        _retitle(project, "Xid 79 on node042, the GPU fell off the bus once more, a longer title")
        free = shutil.disk_usage(generated).free
        (generated / ".filler").write_bytes(b"\0" * max(free - 12 * 1024, 0))  # room for three pages
        before = snapshot(generated)
        result = tooling("--now", NOW, "build", "--render-only", cwd=project)
        assert result.returncode == 1
        line = result.stderr.splitlines()[-1]
        assert line.startswith(f"tooling: error: {GENERATED_DIR}/") and line.endswith(
            ".md: no space left on device; free some space and run it again (nothing was changed)"), line
        assert snapshot(generated) == before
