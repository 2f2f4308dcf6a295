"""`tooling build` never loses the previous site or anything else: a --site-dir that would
replace the records, the docs or a file is refused before anything is written; a failed, killed,
concurrent or out-of-space build leaves the previous site whole (mkdocs builds into a folder
beside it, swapped in only when the build passed)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import snapshot, tmpfs, tooling
from tooling.site.pages import GENERATED_DIR

NOW = "2026-11-30T12:00:00+00:00"
# A tiny site of the test corpus: mkdocs' own theme, the pages the real mkdocs.yml leaves out
# left out, and links to the playbook (not in this copy) reported instead of failing the build.
MKDOCS = """site_name: test
validation:
  links:
    not_found: info
exclude_docs: |
  generated/home-cards*.md
  generated/paged*.md
  generated/lookup*.md
"""
EXPECTED = "expected a new or empty folder, or a site built before, such as site/"


@pytest.fixture
def project(repo: Path) -> Path:
    (repo / "mkdocs.yml").write_text(MKDOCS)
    (repo / "docs").mkdir()
    (repo / "docs" / "index.md").write_text("# Home\n")
    return repo


def _build(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return tooling("--now", NOW, "build", *args, cwd=root, timeout=120)


def _built(root: Path) -> dict[str, bytes]:
    result = _build(root)
    assert result.returncode == 0, result.stderr
    return snapshot(root / "site")


def _leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if ".tooling-" in p.name)


@pytest.mark.parametrize("given, why", [
    ("incidents", "holds files that are not a built site (such as INC-0001.yaml)"),
    (".", "the site would replace a folder that holds the docs folder ({root}/docs)"),
    ("docs", "the site would replace a folder that holds the docs folder ({root}/docs)"),
    ("/", "the site would replace a folder that holds the docs folder ({root}/docs)"),
    ("docs/site", "inside the docs folder ({root}/docs)"),
    ("mkdocs.yml", "a file, not a folder"),
])
def test_a_site_dir_that_would_lose_files_is_refused_before_anything_is_written(
        project: Path, given: str, why: str) -> None:
    before = snapshot(project)
    result = _build(project, "--site-dir", given)
    assert result.returncode == 2
    root = project.resolve()
    assert result.stderr == f"tooling: error: --site-dir {given}: {why.format(root=root)}; {EXPECTED}\n"
    assert snapshot(project) == before  # not even docs/generated/ was rendered


def test_a_failed_build_leaves_the_previous_site_as_it_was(project: Path) -> None:
    site = _built(project)
    with (project / "mkdocs.yml").open("a") as config:
        config.write("nav:\n  - missing.md\n")
    result = _build(project)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1:] == [
        "tooling: error: site not built, site/ left as it was: A reference to 'missing.md' is included in "
        "the 'nav' configuration, which is not found in the documentation files."]
    assert snapshot(project / "site") == site
    assert _leftovers(project) == []


def test_a_broken_link_is_named_with_its_page(project: Path) -> None:
    site = _built(project)
    (project / "docs" / "index.md").write_text("# Home\n\n[gone](../nowhere.md)\n")
    (project / "mkdocs.yml").write_text(MKDOCS.replace("not_found: info", "not_found: warn"))
    result = _build(project)
    assert result.returncode == 1
    assert "tooling: error: site not built, site/ left as it was: docs/index.md: contains a link " \
           "'../nowhere.md', but the target is not found among documentation files.\n" in result.stderr
    assert snapshot(project / "site") == site


def test_a_build_killed_half_way_leaves_the_previous_site_and_the_next_cleans_up(project: Path) -> None:
    site = _built(project)
    build = subprocess.Popen([sys.executable, "-m", "tooling", "--now", NOW, "build"], cwd=project,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not _leftovers(project) and build.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)  # until mkdocs has started writing the new site
    assert _leftovers(project), "the build never made its folder beside site/"
    build.send_signal(signal.SIGKILL)
    build.wait()
    assert snapshot(project / "site") == site
    assert _built(project).keys() == site.keys()  # whole again (mkdocs stamps the build time)
    assert _leftovers(project) == []


def test_two_builds_at_once_both_succeed_and_leave_one_whole_site(project: Path) -> None:
    site = _built(project)
    command = [sys.executable, "-m", "tooling", "--now", NOW, "build"]
    builds = [subprocess.Popen(command, cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
              for _ in range(3)]
    for build in builds:
        _, stderr = build.communicate(timeout=120)
        assert build.returncode == 0, stderr
    assert snapshot(project / "site").keys() == site.keys()  # one whole site, not a mix or a nest
    assert _leftovers(project) == []


def test_a_render_leaves_another_renders_page_in_flight(project: Path) -> None:
    """`tooling serve` re-renders while `tooling build` renders: neither removes the other's
    temporary page before its rename (a shared temporary name, or removing it as stale, did)."""
    assert _build(project, "--render-only").returncode == 0
    generated = project / GENERATED_DIR
    with subprocess.Popen(["sleep", "60"]) as writer:  # a live process, started before its page was written
        in_flight = generated / "incidents" / f".INC-0001.md.{writer.pid}.tmp"
        in_flight.write_text("another render's page")
        result = _build(project, "--render-only")
        writer.kill()
    assert result.returncode == 0, result.stderr
    assert in_flight.read_text() == "another render's page"


def _temporary_pages(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in (root / GENERATED_DIR).rglob(".*.tmp"))


# Run as `python -c HOOK MARKER ARGS...`: the real CLI, its rename of INC-0001.md held until the
# test SIGKILLs it, with the temporary page on disk (a kill that lands in that instant, made certain).
HOLD_THE_RENAME = """
import os, sys, time
from tooling.main import main
marker, real = sys.argv.pop(1), os.replace
def held(src, dst, *args, **kwargs):
    if os.path.basename(dst) == "INC-0001.md":
        open(marker, "w").close()
        time.sleep(600)
    return real(src, dst, *args, **kwargs)
os.replace = held
sys.exit(main(sys.argv[1:]))
"""


def test_a_build_killed_mid_render_leaves_no_temporary_page_after_the_next(project: Path, tmp_path: Path) -> None:
    site = _built(project)
    generated = snapshot(project / GENERATED_DIR)
    (project / GENERATED_DIR / "incidents" / "INC-0001.md").unlink()  # so that the next render writes it
    marker = tmp_path / "renaming"
    build = subprocess.Popen([sys.executable, "-c", HOLD_THE_RENAME, str(marker), "--now", NOW, "build"],
                             cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not marker.exists() and build.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    build.send_signal(signal.SIGKILL)
    build.wait()
    assert _temporary_pages(project) == [f"{GENERATED_DIR}/incidents/.INC-0001.md.{build.pid}.tmp"]
    assert snapshot(project / "site") == site  # the previous site, whole
    assert _built(project).keys() == site.keys()
    assert _temporary_pages(project) == []
    assert snapshot(project / GENERATED_DIR) == generated


def test_a_temporary_page_of_a_reused_pid_is_removed(project: Path) -> None:
    """The pid of a killed build may belong to another process by now: one that started after
    the page was written is not its writer."""
    assert _build(project, "--render-only").returncode == 0
    left = project / GENERATED_DIR / "incidents" / f".INC-0001.md.{os.getpid()}.tmp"  # a live pid
    left.write_text("a killed build's page")
    os.utime(left, (time.time() - 86400, time.time() - 86400))  # written a day ago, before this process
    assert _build(project, "--render-only").returncode == 0
    assert _temporary_pages(project) == []


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None, reason="mounts a small tmpfs: root only")
def test_a_full_disk_fails_the_build_in_one_line_and_keeps_the_previous_site(project: Path, tmp_path: Path) -> None:
    with tmpfs(tmp_path / "disk", "8m") as disk:
        _built(project)
        shutil.copytree(project / "site", disk / "site")
        site = snapshot(disk / "site")
        free = shutil.disk_usage(disk).free
        (disk / "filler").write_bytes(b"\0" * max(free - 64 * 1024, 0))  # 64 KiB left: less than a site
        result = _build(project, "--site-dir", str(disk / "site"))
        assert result.returncode == 1
        assert result.stderr.splitlines()[-1] == (
            f"tooling: error: {disk}/site: no space left on device; free some space and run it again "
            "(nothing was changed)")
        assert snapshot(disk / "site") == site
        assert sorted(p.name for p in disk.iterdir()) == ["filler", "site"]
