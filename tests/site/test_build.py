"""`tooling build` and `tooling serve` on a throwaway copy of this repository."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


from site_support import NOW, copy_project
from tooling.catalogue.modes import catalogue


def _retitle(path: Path, title: str) -> None:
    path.write_text(re.sub(r"(?m)^title: .*$", f"title: {title}", path.read_text(), count=1))


def _tooling(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tooling", *args], cwd=root, capture_output=True,
                          text=True, timeout=300)


def test_bundled_records_build_strictly_without_a_warning(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    result = _tooling(root, "build", "--now", NOW)
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr and "ERROR" not in result.stderr
    assert (root / "site" / "generated" / "incidents" / "INC-0004" / "index.html").is_file()
    assert (root / "site" / "generated" / "reference" / "index.html").read_text().count("detected_at") >= 1
    modes = (root / "site" / "generated" / "failure-modes" / "index.html").read_text()
    for mode in catalogue().modes:  # every mode has its section, reachable from the table
        anchor = mode.id.replace(".", "-")
        assert f'id="{anchor}"' in modes and f'href="#{anchor}"' in modes, mode.id
    incident = (root / "site" / "generated" / "incidents" / "INC-0002" / "index.html").read_text()
    assert 'href="../../failure-modes/#gpu-hbm-ecc"' in incident
    korean = root / "site" / "ko"  # the Korean edition, in the same build, with its own search
    assert '<html lang="ko"' in (korean / "generated" / "incidents" / "INC-0002" / "index.html").read_text()
    assert json.loads((korean / "search" / "search_index.json").read_text())["config"]["lang"] == ["ko", "en"]


def test_rendering_is_incremental(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    first = _tooling(root, "build", "--render-only", "--now", NOW)
    assert first.returncode == 0, first.stderr
    generated = root / "docs" / "generated"
    before = {p: p.stat().st_mtime_ns for p in generated.rglob("*") if p.is_file()}
    again = _tooling(root, "build", "--render-only", "--now", NOW)
    assert again.stderr.startswith(f"rendered 0 page(s), {len(before)} unchanged, 0 removed")
    _retitle(root / "incidents" / "INC-0008.yaml", "Renamed inode exhaustion incident")
    edited = _tooling(root, "build", "--render-only", "--now", NOW)
    changed = {p for p in generated.rglob("*") if p.is_file() and p.stat().st_mtime_ns != before[p]}
    assert generated / "incidents" / "INC-0008.md" in changed
    assert generated / "incidents" / "INC-0009.md" not in changed
    assert generated / "incidents" / "index.md" in changed  # the log shows the title
    assert edited.stderr.startswith(f"rendered {len(changed)} page(s)")


def test_a_removed_record_removes_its_page(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    assert _tooling(root, "build", "--render-only", "--now", NOW).returncode == 0
    (root / "incidents" / "INC-0005.yaml").unlink()
    result = _tooling(root, "build", "--render-only", "--now", NOW)
    assert result.returncode == 0, result.stderr
    assert not (root / "docs" / "generated" / "incidents" / "INC-0005.md").exists()
    assert not (root / "docs" / "generated" / "incidents" / "INC-0005.ko.md").exists()
    assert "2 removed" in result.stderr  # its page in each edition


def test_build_refuses_invalid_records_and_changes_nothing(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    assert _tooling(root, "build", "--render-only", "--now", NOW).returncode == 0
    before = {p: p.read_bytes() for p in (root / "docs").rglob("*") if p.is_file()}
    path = root / "incidents" / "INC-0003.yaml"
    path.write_text(path.read_text().replace("severity: sev", "severity: level", 1))
    result = _tooling(root, "build", "--now", NOW)
    assert result.returncode == 1
    assert result.stderr.startswith("tooling: error: site not built: records do not validate:\n"
                                    "incidents/INC-0003.yaml:")
    assert "[invalid-value] Expected one of: ['sev1', 'sev2', 'sev3', 'sev4', 'unknown']" in result.stderr
    assert {p: p.read_bytes() for p in (root / "docs").rglob("*") if p.is_file()} == before
    assert not (root / "site").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


def _wait_for(url: str, pattern: str, deadline: float) -> float:
    start = time.monotonic()
    while time.monotonic() < deadline:
        try:
            if re.search(pattern, _get(url)):
                return time.monotonic() - start
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} never showed {pattern!r}")


def test_serve_shows_an_edited_record(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "tooling", "serve", "--dev-addr", f"127.0.0.1:{port}"],
                              cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}/generated/incidents/INC-0008/"
        _wait_for(url, "INC-0008", time.monotonic() + 120)
        _retitle(root / "incidents" / "INC-0008.yaml", "Edited live while serving")
        seconds = _wait_for(url, "Edited live", time.monotonic() + 60)
        print(f"\nedited record visible after {seconds:.2f} s")
        korean = f"http://127.0.0.1:{port}/ko/generated/incidents/INC-0008/"  # both editions are served
        _wait_for(korean, '(?s)<html lang="ko".*Edited live', time.monotonic() + 60)
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)


def test_publish_keeps_each_version_on_the_pages_branch(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    env_git = {"GIT_AUTHOR_NAME": "Publisher", "GIT_AUTHOR_EMAIL": "p@test",
               "GIT_COMMITTER_NAME": "Publisher", "GIT_COMMITTER_EMAIL": "p@test"}
    for version in ("0.1", "0.2"):
        result = subprocess.run([sys.executable, "-m", "tooling", "publish", version, "--now", NOW],
                                cwd=root, capture_output=True, text=True, timeout=300,
                                env={**os.environ, **env_git})
        assert result.returncode == 0, result.stderr
        assert result.stderr.endswith(f"published {version} as latest on local branch gh-pages\n")
    show = lambda path: subprocess.run(["git", "-C", str(root), "show", f"gh-pages:{path}"],
                                       capture_output=True, text=True, check=True).stdout
    versions = {v["version"]: v["aliases"] for v in json.loads(show("versions.json"))}
    assert versions == {"0.2": ["latest"], "0.1": []}
    assert "INC-0004" in show("0.1/generated/incidents/INC-0004/index.html")
    assert "INC-0004" in show("0.1/ko/generated/incidents/INC-0004/index.html")
    assert 'url=latest/' in show("index.html")
