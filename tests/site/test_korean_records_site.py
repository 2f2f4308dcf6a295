"""Records written in Korean on the built site: rendered intact in both editions and found by search.

Records stay in the language they were written in, so both editions hold a Korean record. The
first part files one through the real CLI in a copy of this project and builds it; the second
searches the bundled one (incidents/INC-0015.yaml) in Chromium: the Korean edition's index is
built for Korean and English (mkdocs.yml: playbook-editions), and a reader types a word as it
comes, bare or with its particle.
"""
from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from site_support import NOW, copy_project
from test_korean_records import EVENTS, FIRST, ROOT_CAUSE, timeline_assignments
from test_site_browser import search


def _tooling(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tooling", *args], cwd=root, capture_output=True,
                          text=True, timeout=300)


# --- a Korean report filed through the CLI, on the built pages ----------------------------------

@pytest.fixture(scope="module")
def korean_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of this project with a Korean report filed through the CLI (INC-0016), built."""
    root = copy_project(tmp_path_factory.mktemp("korean-repo"))
    filed = _tooling(root, "new-incident", "--title", FIRST, "--run", "demo-7b", "--severity", "sev2",
                     "--symptom", "checkpoint", "--layer", "storage", "--detected-at", "2026-11-10T03:12:00+09:00")
    assert filed.stdout.startswith("created incidents/INC-0016.yaml\n"), filed.stderr
    edited = _tooling(root, "set", "INC-0016", f"root_cause={ROOT_CAUSE}", *timeline_assignments())
    assert edited.returncode == 0, edited.stderr
    built = _tooling(root, "build", "--now", NOW, "--site-dir", "site")
    assert built.returncode == 0, built.stderr
    return root


@pytest.mark.parametrize("edition", ["", "ko/"])
def test_the_incident_page_shows_the_korean_text_intact(korean_copy: Path, edition: str) -> None:
    site = korean_copy / "site" / edition
    page = (site / "generated" / "incidents" / "INC-0016" / "index.html").read_bytes().decode("utf-8")
    for text in (FIRST, ROOT_CAUSE, *(event for _, event, _ in EVENTS), "김민수"):
        assert html.escape(text, quote=False) in page, text  # escaped where HTML needs it, Hangul as is
    assert "&amp; df -i" in page and "-&gt; 용량이 아니라" in page
    assert f"<title>INC-0016: {html.escape(FIRST)}" in page
    index = json.loads((site / "search" / "search_index.json").read_text("utf-8"))
    found = {d["location"] for d in index["docs"] if FIRST in d["title"]}
    assert found == {f"{edition}generated/incidents/INC-0016/"}, found


# --- the bundled Korean record, searched in Chromium ---------------------------------------------

TITLE = "INC-0015: 체크포인트 저장 중 nfs-ckpt02 가 응답하지 않아 256개 랭크 전체가 41분간 멈춤"


def _result(page: Page) -> Locator:
    """The search result of the Korean record, once it is shown (others may rank above it)."""
    result = page.locator(".md-search-result__item", has_text=TITLE).first
    expect(result).to_be_visible(timeout=15_000)
    return result


# the record says "nfsd 스레드가", "스레드를", "스레드는": the bare noun finds it, and so does a
# word with its particle or a verb as it is conjugated there
@pytest.mark.parametrize("query", ["nfsd 스레드", "스레드를", "응답하지 않아"])
def test_the_korean_edition_finds_the_korean_incident(page: Page, site_url: str, query: str) -> None:
    page.goto(site_url + "/ko/")
    search(page, query)
    result = _result(page)
    assert result.locator("a").first.get_attribute("href").split("?")[0] == (
        f"{site_url}/ko/generated/incidents/INC-0015/")
    result.click()
    expect(page.locator("article h1")).to_contain_text(TITLE)
    expect(page.locator("article")).to_contain_text("nfs-ckpt02 의 nfsd 스레드가 기본값 8개라 요청 큐가 꽉 차 있었음.")


def test_the_english_edition_finds_it_too(page: Page, site_url: str) -> None:
    page.goto(site_url + "/")
    search(page, "nfsd 스레드")
    href = _result(page).locator("a").first.get_attribute("href")
    assert re.fullmatch(rf"{re.escape(site_url)}/generated/incidents/INC-0015/(\?.*)?", href), href
