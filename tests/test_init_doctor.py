"""`tooling init DIR` and `tooling doctor` (issue 27 items 1 and 2) in throwaway folders: the files
init writes, its refusal of a folder that is not empty, never an overwrite, the editions, the demo
records; doctor's overrides, stale overrides after an upgrade and what is missing."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from support import LUSTRE_MODE, PROJECT, snapshot, tooling
from tooling.records.shipped import shipped_root
from tooling.writers.playbook_lock import LOCK

WRITTEN = ["mkdocs.yml", "README.md", "requirements.txt", ".pre-commit-config.yaml", ".github/workflows/wiki.yml",
           ".gitlab-ci.yml", ".gitignore", "docs/.gitkeep", "incidents/.gitkeep", "runbooks/runs/.gitkeep", LOCK]


def _init(tmp_path: Path, *args: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    target = tmp_path / "wiki"
    result = tooling("init", str(target), *args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return target


def _plugins(target: Path) -> list[str]:
    config = yaml.safe_load((target / "mkdocs.yml").read_text(encoding="utf-8"))
    return [p if isinstance(p, str) else next(iter(p)) for p in config["plugins"]]


def test_init_writes_the_repository_with_the_real_executable(tmp_path: Path) -> None:
    target = tmp_path / "wiki"
    result = subprocess.run([sys.executable, "-m", "tooling", "init", str(target)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"created {target / path}" for path in WRITTEN]
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file()) == sorted(WRITTEN)
    assert _plugins(target) == ["search", "tags", "playbook", "literate-nav"]
    hook = yaml.safe_load((target / ".pre-commit-config.yaml").read_text(encoding="utf-8"))["repos"][0]["hooks"]
    shipped_hooks = yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [h["id"] for h in hook] == [shipped_hooks[0]["id"]]
    for ci in (".github/workflows/wiki.yml", ".gitlab-ci.yml"):
        text = (target / ci).read_text(encoding="utf-8")
        assert "tooling validate --strict" in text and "tooling build" in text and "tooling publish main" in text
        yaml.safe_load(text)
    readme = (target / "README.md").read_text(encoding="utf-8")
    for command in ("tooling new-incident", "tooling review PM-0001 --submit", "tooling publish", "tooling doctor"):
        assert command in readme
    # the validate that CI and the hook run passes on what init wrote
    assert tooling("validate", "--strict", cwd=target).returncode == 0


def test_lang_picks_the_editions(tmp_path: Path) -> None:
    english = _init(tmp_path / "en")
    both = _init(tmp_path / "both", "--lang", "ko,en", "--name", "Team: wiki")
    assert "i18n" not in _plugins(english) and "*.ko.md" in yaml.safe_load((english / "mkdocs.yml").read_text())["exclude_docs"]
    assert _plugins(both) == ["search", "tags", "i18n", "playbook", "playbook-editions", "literate-nav"]
    config = yaml.safe_load((both / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["site_name"] == "Team: wiki" and "exclude_docs" not in config
    assert [lang["locale"] for lang in config["plugins"][2]["i18n"]["languages"]] == ["en", "ko"]
    result = tooling("init", str(tmp_path / "ko"), "--lang", "ko", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (2, "tooling: error: --lang: Expected one of: [en, en,ko] "
                                                     "but received: 'ko'\n")
    assert not (tmp_path / "ko").exists()


def test_demo_adds_the_bundled_records(tmp_path: Path) -> None:
    target = _init(tmp_path, "--demo")
    for folder in ("incidents", "runbooks/runs"):
        bundled = sorted(p.name for p in (shipped_root() / folder).glob("*.yaml"))
        assert bundled and sorted(p.name for p in (target / folder).glob("*.yaml")) == bundled
    assert (target / "incidents/PM-0001.yaml").read_bytes() == (shipped_root() / "incidents/PM-0001.yaml").read_bytes()
    assert tooling("validate", cwd=target).returncode == 0


def test_a_folder_that_is_not_empty_is_refused_and_nothing_is_overwritten(tmp_path: Path) -> None:
    target = tmp_path / "wiki"
    target.mkdir()
    (target / "README.md").write_text("ours\n", encoding="utf-8")
    result = tooling("init", str(target), cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (f"tooling: error: {target}: not empty (README.md); expected a new or empty folder, "
                             f"or --force to add only the files it lacks (none is overwritten)\n")
    assert snapshot(target) == {"README.md": b"ours\n"}
    result = tooling("init", str(target), "--force", cwd=tmp_path)
    assert result.returncode == 0
    assert (target / "README.md").read_text(encoding="utf-8") == "ours\n"
    assert f"skipped {target / 'README.md'}: there already, left as it is" in result.stderr
    assert f"created {target / 'mkdocs.yml'}" in result.stdout
    again = tooling("init", str(target), "--force", cwd=tmp_path)  # a second run writes nothing
    assert again.returncode == 0 and "created" not in again.stdout


def test_a_file_in_place_of_the_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "wiki").write_text("x", encoding="utf-8")
    result = tooling("init", "wiki", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (1, "tooling: error: wiki: not a folder; expected a new or empty "
                                                     "folder for the wiki\n")


LOCAL_MODE = LUSTRE_MODE + """\
- id: storage.disk-full
  title: Scratch is full again
  layer: storage
  symptom: checkpoint
  summary: Our scratch volume filled up.
  errno: [28]
  automation: storage-capacity-guard
  playbook: playbook/checkpoint-cadence.md#saving-can-fail-too
"""


def _overridden(target: Path) -> None:
    (target / "runbooks/ladders").mkdir(parents=True)
    (target / "runbooks/ladders/hang.yaml").write_bytes((shipped_root() / "runbooks/ladders/hang.yaml").read_bytes())
    (target / "docs/playbook").mkdir(parents=True)
    (target / "docs/playbook/budget.md").write_text("# Our budget\n", encoding="utf-8")
    (target / "docs/team.md").write_text("# Ours alone\n", encoding="utf-8")  # no shipped counterpart
    (target / "runbooks/catalogue.yaml").write_text(LOCAL_MODE, encoding="utf-8")


def test_doctor_names_the_overrides_and_is_healthy(tmp_path: Path) -> None:
    target = _init(tmp_path)
    assert tooling("doctor", cwd=target).stdout == ""
    _overridden(target)
    result = tooling("doctor", cwd=target)
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines() == [
        "overrides docs/playbook/budget.md", "overrides runbooks/ladders/hang.yaml",
        "adds failure mode storage.lustre-ost-full (runbooks/catalogue.yaml)",
        "changes failure mode storage.disk-full (runbooks/catalogue.yaml)"]
    assert result.stderr == "4 overrides; healthy\n"
    report = json.loads(tooling("doctor", "--json", cwd=target).stdout)
    assert [(o["name"], o["change"], o["stale"]) for o in report["overrides"]] == [
        ("docs/playbook/budget.md", "overridden", None), ("runbooks/ladders/hang.yaml", "overridden", None),
        ("storage.lustre-ost-full", "added", None), ("storage.disk-full", "changed", None)]
    assert report["problems"] == [] and report["shipped"] is False


def test_doctor_names_stale_overrides_after_an_upgrade(tmp_path: Path) -> None:
    target = _init(tmp_path)
    _overridden(target)
    # the lock as an older playbook wrote it: its budget page and its disk-full mode were different
    lock = yaml.safe_load((target / LOCK).read_text(encoding="utf-8"))
    lock["version"] = "0.0.9"
    lock["files"]["docs/playbook/budget.md"] = "0" * 64
    lock["failure_modes"]["storage.disk-full"] = "0" * 64
    del lock["files"]["runbooks/ladders/hang.yaml"]  # a ladder the older playbook did not ship
    (target / LOCK).write_text(yaml.safe_dump(lock), encoding="utf-8")
    result = tooling("doctor", cwd=target)
    assert result.returncode == 1
    problems = [line for line in result.stdout.splitlines() if "[stale-override]" in line]
    assert [line.split(":")[0] for line in problems] == [
        "docs/playbook/budget.md", "runbooks/ladders/hang.yaml", "runbooks/catalogue.yaml"]
    assert "the shipped docs/playbook/budget.md changed since .playbook.lock was written (playbook 0.0.9" in problems[0]
    assert "the shipped runbooks/ladders/hang.yaml is new since" in problems[1]
    assert "the shipped failure mode storage.disk-full changed since" in problems[2]
    assert result.stderr == "4 overrides; 3 problems\n"
    relocked = tooling("doctor", "--relock", cwd=target)
    assert relocked.returncode == 0 and "[stale-override]" not in relocked.stdout


def test_doctor_names_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "runbooks").mkdir()
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nplugins:\n  - search\n", encoding="utf-8")
    result = tooling("doctor", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "mkdocs.yml: [missing] its plugins do not name `playbook`; expected `- playbook` after i18n and before "
        "literate-nav (the playbook's pages come from it)",
        "incidents/: [missing] no such folder; expected the records folder `tooling init` makes",
        "runbooks/runs/: [missing] no such folder; expected the records folder `tooling init` makes",
        ".playbook.lock: [missing] no such file; expected the lock `tooling init` writes, to tell stale overrides "
        "(`tooling doctor --relock` writes one for the playbook installed now)"]
    (tmp_path / "mkdocs.yml").unlink()
    assert tooling("doctor", cwd=tmp_path).stdout.startswith(
        "mkdocs.yml: [missing] no such file; expected the site's config (`tooling init` writes one)\n")


def test_doctor_in_the_shipped_playbook_says_so() -> None:
    result = tooling("doctor", cwd=PROJECT)
    assert (result.returncode, result.stdout) == (0, f"this is the shipped playbook itself ({shipped_root()}): "
                                                     "it overrides nothing\n")
    assert json.loads(tooling("doctor", "--json", cwd=PROJECT).stdout)["shipped"] is True


@pytest.mark.parametrize("text", ["files: [\n", "just text\n"])
def test_a_lock_that_does_not_read_is_one_located_line(tmp_path: Path, text: str) -> None:
    target = _init(tmp_path)
    (target / LOCK).write_text(text, encoding="utf-8")
    result = tooling("doctor", cwd=target)
    assert result.returncode == 1 and result.stderr.startswith("tooling: error: .playbook.lock:")
    assert len(result.stderr.splitlines()) == 1
