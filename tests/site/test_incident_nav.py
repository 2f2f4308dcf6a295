"""The incident log's navigation: newest first by month, and by year once incidents span several,
so that with navigation.prune a page carries one line per other year instead of one per month
there ever was (the page weight of a wiki of years of incidents)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from mkdocs.config import load_config
from mkdocs.structure.files import get_files
from mkdocs.structure.nav import Navigation, Section, get_navigation

from site_support import NOW, PROJECT, copy_project


def _nav(root: Path, language: str) -> Navigation:
    """The navigation mkdocs builds for one edition (as tests/site/test_navigation.py makes it)."""
    config = load_config(str(root / "mkdocs.yml"))
    config.plugins["i18n"].current_language = language
    config = config.plugins.on_config(config)
    files = config.plugins.on_files(get_files(config), config=config)
    return config.plugins.on_nav(get_navigation(files, config), config=config, files=files)


def _log(nav: Navigation) -> list:
    """The entries of the incident log's section, under the Incidents tab."""
    incidents = next(item for item in nav.items if isinstance(item, Section) and item.title in ("Incidents", "인시던트"))
    log = next(item for item in incidents.children if isinstance(item, Section) and item.children[0].url.endswith(
        "generated/incidents/"))
    return log.children[1:]  # after the log's own page


def _shape(entries: list) -> list:
    return [(e.title, _shape(e.children)) if isinstance(e, Section) else e.title for e in entries]


def _render(root: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "tooling", "build", "--render-only", "--now", NOW], cwd=root,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("language, years", [("en", ["2026", "2025"]), ("ko", ["2026년", "2025년"])])
def test_incidents_of_two_years_are_grouped_by_year_then_month(tmp_path: Path, language: str,
                                                                 years: list[str]) -> None:
    last_year = (PROJECT / "incidents" / "INC-0014.yaml").read_text(encoding="utf-8")
    last_year = last_year.replace("id: INC-0014", "id: INC-0016").replace("2026-", "2025-")
    root = copy_project(tmp_path / "repo", {"incidents/INC-0016.yaml": last_year})
    _render(root)
    shape = _shape(_log(_nav(root, language)))
    assert [year for year, _ in shape] == years
    this_year, (_, [(month, pages)]) = shape[0][1], shape[1]
    assert month == ("2025-11" if language == "en" else "2025년 11월") and pages == ["INC-0016"]
    assert all(re.fullmatch(r"2026-\d\d|2026년 \d+월", month) for month, _ in this_year)
    assert sum(len(pages) for _, pages in this_year) == 15


def test_incidents_of_one_year_are_grouped_by_month_alone(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "repo")
    _render(root)
    shape = _shape(_log(_nav(root, "en")))
    assert shape and all(re.fullmatch(r"2026-\d\d", month) for month, _ in shape)
    assert sum(len(pages) for _, pages in shape) == 15
