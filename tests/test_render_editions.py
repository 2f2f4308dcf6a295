"""Rendering both editions: P.ko.md beside every P.md, Korean words from the catalogue, record
text as written, dates and numbers as Korean writes them, and the English pages unchanged."""
from __future__ import annotations

import json
import re
import shutil
from datetime import datetime, timedelta
from html import unescape
from pathlib import Path

import pytest

from support import BOTH_EDITIONS
from tooling.analysis import load_analysis
from tooling.site.build import render_site
from tooling.site.config import read_site_config
from tooling.site.filters import elapsed
from tooling.site.history import site_history
from tooling.site.i18n import edition, site_languages
from tooling.site.pages import GENERATED_DIR
from tooling.site.render import render_pages

PROJECT = Path(__file__).resolve().parents[1]
NOW = datetime.fromisoformat("2026-11-29T12:00:00+00:00")
HANGUL = re.compile(r"[\uac00-\ud7a3]")
# Record text that must reach the Korean page exactly as written, markdown-escaped as everywhere.
INCIDENT = """kind: incident
id: INC-0950
title: "NCCL watchdog fired on rank 12 after a 4,096-step stall"
run: demo-7b
status: resolved
severity: sev2
symptom: hang
layer: nccl
detected_at: 2026-11-21T01:00:00+00:00
resolved_at: 2026-11-21T04:30:00+00:00
impact: {gpu_hours_lost: 12345, steps_lost: 4096}
timeline:
  - at: 2026-11-21T01:00:00+00:00
    event: "Pager fired for the stall"
  - at: 2026-11-21T11:10:00+09:00
    event: "노드 017에서 py-spy 덤프 확보"
root_cause: "A flaky IB link on node017 (mlx5_3) stalled the all-reduce."
"""


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of this project's records rendered in both editions (no mkdocs build)."""
    root = tmp_path_factory.mktemp("editions")
    for name in ("incidents", "runbooks", "docs"):
        shutil.copytree(PROJECT / name, root / name, ignore=shutil.ignore_patterns("generated"))
    (root / "incidents" / "INC-0950.yaml").write_text(INCIDENT, encoding="utf-8")
    (root / "mkdocs.yml").write_text(BOTH_EDITIONS, encoding="utf-8")
    render_site(root, now=NOW, site=read_site_config(root))
    return root / GENERATED_DIR


def test_every_english_page_has_its_korean_page(generated: Path) -> None:
    pages = {p.relative_to(generated).as_posix() for p in generated.rglob("*.md") if not p.is_relative_to(generated / "labs")}
    english = {p for p in pages if not p.endswith(".ko.md")}
    assert {p.removesuffix(".ko.md") + ".md" for p in pages - english} == english and len(english) > 30


def test_an_incident_page_in_korean(generated: Path) -> None:
    ko = (generated / "incidents" / "INC-0950.ko.md").read_text(encoding="utf-8")
    en = (generated / "incidents" / "INC-0950.md").read_text(encoding="utf-8")
    for label in ("| 항목 | 값 |", "| 감지 | 2026년 11월 21일 01:00 UTC |",
                  "| 해결 | 2026년 11월 21일 04:30 UTC (감지 후 3\\.5시간) |", "## 타임라인", "| 시각 | 내용 | 누가 |",
                  "## 근본 원인", "GPU-hour 12,345, 스텝 4,096만큼 잃었습니다.", "## 변경 이력"):
        assert label in ko, label
    # record text exactly as the English page has it; a time written in +09:00 is shown in UTC, as
    # every other time (issue 26)
    for text in ("NCCL watchdog fired on rank 12 after a 4,096\\-step stall",
                 "A flaky IB link on node017 \\(mlx5\\_3\\) stalled the all\\-reduce\\.",
                 "| 2026년 11월 21일 02:10 UTC | 노드 017에서 py\\-spy 덤프 확보 |"):
        assert text in ko, text
    assert "| 2026\\-11\\-21 02:10 UTC | 노드 017에서 py\\-spy 덤프 확보 |" in en
    for label in ("| Field | Value |", "| Detected | 2026\\-11\\-21 01:00 UTC |", "12,345 GPU-hours and 4,096 steps lost.",
                  "## Timeline", "## Root cause"):
        assert label in en, label


def test_the_run_card_and_its_banner_in_korean(generated: Path) -> None:
    cards = (generated / "home-cards.ko.md").read_text(encoding="utf-8")
    assert "**진행:** 715,000 스텝 중 609,750 (85\\.3%)" in cards
    assert "**지금 온콜:** <span data-oncall-slot=\"now\">2026년 11월 29일 20:00 UTC까지 Diego Alvarez</span>" in cards
    assert re.search(r'!!! danger "Demo 7B pretraining, 3T tokens on atlas: 이 페이지는 <span data-stale-hours>3</span>'
                     r"시간 전에 마지막으로 갱신되었습니다\"", cards)
    # the browser script gets the Korean words for the heartbeat's age
    words = json.loads(unescape(re.search(r'data-elapsed-words="([^"]*)"', cards).group(1)))
    assert words == {"under": "1분 미만", "min": "%(minutes)s분", "h": "%(hours)s시간",
                     "h_min": "%(hours)s시간 %(minutes)s분", "days": "%(days)s일", "days_h": "%(days)s일 %(hours)s시간"}
    english = (generated / "home-cards.md").read_text(encoding="utf-8")
    assert "data-elapsed-words" not in english and "**On call now:**" in english


def test_the_run_page_says_when_its_last_good_checkpoint_was_saved(generated: Path) -> None:
    """Issue 26: the card said it, the run page did not."""
    english = (generated / "runs" / "demo-7b.md").read_text(encoding="utf-8")
    korean = (generated / "runs" / "demo-7b.ko.md").read_text(encoding="utf-8")
    assert "step\\_609500, saved 2026\\-11\\-29 08:06 UTC (verified) |" in english
    assert "step\\_609500, 2026년 11월 29일 08:06 UTC 저장 (검증됨) |" in korean
    # the state in the edition's words, the record's value beside them (issue 26: `degraded` alone)
    assert "| 상태 | 성능 저하 (<code>degraded</code>) |" in korean and "| State | ` degraded ` |" in english


def test_a_failure_mode_names_the_incidents_whose_lines_show_it(generated: Path) -> None:
    """Issue 26: "GPU fell off the bus" said 0 incidents beside an incident of that title."""
    for name, label in (("failure-modes.md", "Also in the lines of"), ("failure-modes.ko.md", "이 로그 줄이 함께 나온 인시던트")):
        page = (generated / name).read_text(encoding="utf-8")
        section = page.split("{#gpu-fell-off-bus}", 1)[1].split("\n## ", 1)[0]
        assert f"| {label} | [INC\\-0011: GPU fell off the bus" in section, section


def test_durations_in_korean_as_the_script_writes_them() -> None:
    ko = edition("ko")
    ages = [timedelta(seconds=30), timedelta(minutes=4), timedelta(minutes=130), timedelta(hours=76)]
    assert [elapsed(a, t=ko) for a in ages] == ["1분 미만", "4분", "2시간 10분", "3일 4시간"]
    assert [elapsed(a) for a in ages] == ["under 1 min", "4 min", "2 h 10 min", "3 days 4 h"]


def test_no_korean_page_shows_an_english_heading(generated: Path) -> None:
    """Every heading the templates write is Korean; the ones left are record or playbook text."""
    english = []
    for page in generated.rglob("*.ko.md"):
        for line in page.read_text(encoding="utf-8").splitlines():
            if line.startswith("## ") and not HANGUL.search(line) and not re.match(r"## \d+\. ", line):
                english.append(f"{page.name}: {line}")
    stack_and_modes = ("stack.ko.md", "failure-modes.ko.md", "repeats.ko.md")  # catalogue and overlay text
    assert [e for e in english if not e.startswith(stack_and_modes)] == []


def test_english_pages_are_the_same_with_or_without_the_korean_edition(generated: Path, tmp_path: Path) -> None:
    root = generated.parents[1]
    analysis = load_analysis(root, now=NOW)
    alone = tmp_path / "generated"
    render_pages(analysis, site_history(root), root=root, out_dir=alone, site=read_site_config(root),
                 languages=("en",))
    for page in alone.rglob("*.md"):
        assert page.read_bytes() == (generated / page.relative_to(alone)).read_bytes(), page
    assert not list(alone.rglob("*.ko.md")) or all(p.is_relative_to(alone / "labs") for p in alone.rglob("*.ko.md"))


def test_editions_follow_mkdocs_yml() -> None:
    assert site_languages({}) == ("en",)
    assert site_languages({"plugins": ["search", {"i18n": {"languages": [{"locale": "en", "default": True},
                                                                          {"locale": "ko"}, {"locale": "fr"}]}}]}) \
        == ("en", "ko")  # French has no catalogue here
    assert site_languages(read_site_config(PROJECT).data) == ("en", "ko")


def test_playbook_links_take_their_titles_from_the_korean_pages(generated: Path) -> None:
    """'Spare nodes: drain on xid and ecc' in English; the Korean page's own headings in Korean."""
    modes = (generated / "failure-modes.ko.md").read_text(encoding="utf-8")
    links = re.findall(r"\| 플레이북 \| \[([^\]]*)\]\(\.\./playbook/spare-nodes\.md#drain-on-xid-and-ecc\)", modes)
    korean = (PROJECT / "docs" / "playbook" / "spare-nodes.ko.md").read_text(encoding="utf-8")
    title = re.search(r"^# (.+?) \{#", korean, re.MULTILINE).group(1)
    section = re.search(r"^## (.+?) \{#drain-on-xid-and-ecc\}", korean, re.MULTILINE).group(1)
    assert links and set(links) == {f"{title}: {section}"}
    english = (generated / "failure-modes.md").read_text(encoding="utf-8")
    assert "| Playbook | [Spare nodes: drain on xid and ecc](../playbook/spare-nodes.md#drain-on-xid-and-ecc) |" in english


def test_a_ladder_without_its_overlay_says_so_and_the_others_are_korean(tmp_path: Path) -> None:
    root = tmp_path
    for name in ("incidents", "runbooks", "docs"):
        shutil.copytree(PROJECT / name, root / name, ignore=shutil.ignore_patterns("generated"))
    (root / "runbooks" / "ladders" / "nan.ko.yaml").unlink()
    (root / "mkdocs.yml").write_text(BOTH_EDITIONS, encoding="utf-8")
    render_site(root, now=NOW, site=read_site_config(root))
    out = root / GENERATED_DIR / "ladders"
    note = '!!! note "아직 번역되지 않았습니다"'
    nan, hang = (out / "nan.ko.md").read_text(encoding="utf-8"), (out / "hang.ko.md").read_text(encoding="utf-8")
    assert note in nan and "이 사다리는 아직 번역되지 않아" in nan
    assert note not in hang and HANGUL.search(hang.split("\n# ", 1)[1].splitlines()[0])  # the overlay's title
    index = (out / "index.ko.md").read_text(encoding="utf-8")
    assert "번역이 없어 영어 원문 그대로 보여 주는 사다리: nan." in index
    assert note not in (out / "nan.md").read_text(encoding="utf-8")
