"""A team's own repository takes the playbook from the package (issue 27): its mkdocs.yml names
the `playbook` plugin (tooling/site/playbook.py) instead of copying pages, its records are its
own, and a file of its own overrides the shipped one of the same path or id. Here the shipped
playbook is this checkout (tooling.records.shipped); tests/test_playbook_wheel.py checks that a
wheel carries the same files."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from support import PROJECT, tooling

NOW = "2026-12-06T12:00:00+00:00"
# What a team writes by hand (tooling init writes more): the theme, the two editions, the plugin
# between i18n and literate-nav (tooling/site/playbook.py says why)
MKDOCS = """\
site_name: Team wiki
strict: true
theme:
  name: material
  font: false
plugins:
  - search
  - tags
  - i18n:
      docs_structure: suffix
      reconfigure_search: false
      languages:
        - locale: en
          name: English
          default: true
        - locale: ko
          name: 한국어
  - playbook
  - playbook-editions
  - literate-nav:
      nav_file: SUMMARY.md
"""
INCIDENT = """\
kind: incident
id: INC-0001
title: All ranks stopped at step 900 while one rank waited in an all-reduce
run: team-7b
status: resolved
severity: sev2
symptom: hang
layer: nccl
detected_at: 2026-11-01T04:06:00+00:00
resolved_at: 2026-11-01T07:00:00+00:00
"""
TEAM_STEP = "Ask the fabric team whether switch sw-17 flapped"
TEAM_ABOUT = "# About this team's wiki\n\nThe team's own page, in place of the shipped one.\n"


def _shipped_ladder(symptom: str) -> dict:
    return yaml.safe_load((PROJECT / "runbooks" / "ladders" / f"{symptom}.yaml").read_text(encoding="utf-8"))


@pytest.fixture
def team(tmp_path: Path) -> Path:
    """A git repository with a minimal mkdocs.yml, one run, one incident, the hang ladder
    overridden (its first step renamed) and the about page replaced."""
    root = tmp_path / "team"
    (root / "incidents").mkdir(parents=True)
    (root / "mkdocs.yml").write_text(MKDOCS, encoding="utf-8")
    (root / "incidents" / "INC-0001.yaml").write_text(INCIDENT, encoding="utf-8")
    ladder = (PROJECT / "runbooks" / "ladders" / "hang.yaml").read_text(encoding="utf-8")
    shipped_step = _shipped_ladder("hang")["steps"][0]["name"]
    (root / "runbooks" / "ladders").mkdir(parents=True)
    (root / "runbooks" / "ladders" / "hang.yaml").write_text(
        ladder.replace(f"  - name: {shipped_step}\n", f"  - name: {TEAM_STEP}\n", 1), encoding="utf-8")
    (root / "docs" / "playbook").mkdir(parents=True)
    (root / "docs" / "playbook" / "about.md").write_text(TEAM_ABOUT, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    made = tooling("--now", NOW, "new-run", "team-7b", "--owner", "dana", cwd=root)
    assert made.returncode == 0, made.stderr
    return root


@pytest.mark.slow
@pytest.mark.executable
def test_a_team_repository_builds_the_shipped_playbook_with_its_own_overrides(team: Path) -> None:
    built = tooling("--now", NOW, "build", cwd=team, timeout=300)
    assert built.returncode == 0, built.stderr
    site = team / "site"
    shipped_step = _shipped_ladder("hang")["steps"][0]["name"]
    for edition in ("", "ko/"):
        # the shipped pages, in both editions: the Korean one from the shipped .ko.md
        assert (site / edition / "playbook" / "checkpoint-cadence" / "index.html").is_file()
        assert (site / edition / "generated" / "ladders" / "nan" / "index.html").is_file()
        hang = (site / edition / "generated" / "ladders" / "hang" / "index.html").read_text(encoding="utf-8")
        assert TEAM_STEP in hang and shipped_step not in hang
        about = (site / edition / "playbook" / "about" / "index.html").read_text(encoding="utf-8")
        # (its title in the navigation is the shipped SUMMARY.md's, which a team's own replaces)
        assert "About this team" in about and "where the playbook comes from" not in about
        assert (site / edition / "generated" / "incidents" / "INC-0001" / "index.html").is_file()
    korean = (PROJECT / "docs" / "playbook" / "budget.ko.md").read_text(encoding="utf-8").splitlines()[0][2:]
    assert korean in (site / "ko" / "playbook" / "budget" / "index.html").read_text(encoding="utf-8")
    # the shipped assets and theme overrides
    assert (site / "assets" / "stylesheets" / "playbook.css").is_file()
    assert "assets/javascripts/freshness.js" in (site / "index.html").read_text(encoding="utf-8")
    # the shipped ladder's page names the path a team puts its own at, with nothing to edit
    nan = (site / "generated" / "ladders" / "nan" / "index.html").read_text(encoding="utf-8")
    assert "<code>runbooks/ladders/nan.yaml</code>" in nan
    # nothing of the package was copied into the team's repository
    assert sorted(p.name for p in (team / "docs").iterdir()) == ["generated", "playbook"]
    assert sorted(p.name for p in (team / "runbooks" / "ladders").iterdir()) == ["hang.yaml"]


@pytest.mark.slow
@pytest.mark.executable
def test_triage_and_validate_in_a_team_repository_read_its_ladder_over_the_shipped_one(team: Path) -> None:
    walked = tooling("triage", "hang", "--timeout", "1", cwd=team, timeout=120)
    assert walked.returncode == 0, walked.stderr
    assert walked.stdout.splitlines()[1].startswith(f"[1/{len(_shipped_ladder('hang')['steps'])}] {TEAM_STEP}:")
    checked = tooling("--now", NOW, "validate", "--strict", cwd=team)
    assert (checked.returncode, checked.stdout) == (0, "")
    shipped = len(list((PROJECT / "runbooks" / "ladders").glob("*.yaml"))) + len(list((PROJECT / "runbooks").glob("stack*.yaml")))
    # its incident, run and ladder, and the shipped ones less the hang ladder and its translation
    assert f"{3 + shipped - 2} files checked" in checked.stderr
