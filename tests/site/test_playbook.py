"""Every concrete fact of the lecture notes appears on the built site (seed_facts.yaml)."""
from __future__ import annotations

import html
import re
from pathlib import Path

import yaml

FACTS = yaml.safe_load((Path(__file__).with_name("seed_facts.yaml")).read_text())


def _site_text(site: Path) -> str:
    pages = [p.read_text(encoding="utf-8") for p in site.rglob("*.html")]
    text = " ".join(re.sub(r"<[^>]+>", " ", page) for page in pages)
    return " ".join(html.unescape(text).split()).lower()


def test_every_fact_of_the_notes_is_on_the_site(built_site: Path) -> None:
    text = _site_text(built_site)
    missing = [f"{fact['fact']}: {phrase!r}" for fact in FACTS for phrase in fact["phrases"]
               if " ".join(phrase.lower().split()) not in text]
    assert len(FACTS) >= 60
    assert missing == []


def test_playbook_pages_link_to_the_labs_and_tools(built_site: Path) -> None:
    playbook = built_site / "playbook"
    assert (playbook / "index.html").is_file()
    labs = (playbook / "labs" / "index.html").read_text()
    for lab in ("01-slurm-auto-resume", "02-kill-switch", "03-nan-guard", "04-hung-rank", "05-atomic-checkpoints"):
        assert f"generated/labs/{lab}/" in labs
    stack = (built_site / "generated" / "stack" / "index.html").read_text()
    assert "playbook-chart" in stack and "incidents in the log" in stack


def korean_phrases() -> dict[str, list[str]]:
    """{fact: Korean phrases}, merged from every file of seed_facts_ko/ (one per area of the
    Korean edition; a fact may get phrases from several)."""
    merged: dict[str, list[str]] = {}
    for path in sorted(Path(__file__).with_name("seed_facts_ko").glob("*.yaml")):
        for fact, phrases in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).items():
            merged.setdefault(fact, []).extend(phrases)
    return merged


def test_every_fact_of_the_notes_is_in_the_korean_edition(built_site: Path) -> None:
    text = _site_text(built_site / "ko")
    phrases = korean_phrases()
    facts = [fact["fact"] for fact in FACTS]
    assert sorted(set(phrases) - set(facts)) == []  # each key is the exact text of a fact
    assert [fact for fact in facts if not phrases.get(fact)] == []  # every fact has a Korean phrase
    missing = [f"{fact}: {phrase!r}" for fact in facts for phrase in phrases[fact]
               if " ".join(phrase.lower().split()) not in text]
    assert missing == []
