"""Facts the README states that the repository can check: one fact, one answer (the README said 74 failure
modes while the catalogue had grown to 78)."""
from __future__ import annotations

import re
from pathlib import Path

from tooling.catalogue.modes import catalogue

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_counts_the_catalogues_failure_modes() -> None:
    [said] = re.findall(r"`tooling/catalogue/failure_modes\.yaml`: ([0-9]+) ways a run dies", README)
    assert int(said) == len(catalogue().modes)


def test_every_corpus_folder_the_readme_names_is_there() -> None:
    named = set(re.findall(r"`tests/corpus/([a-z0-9-]+)/?`", README))
    assert named, "the README names the labelled sets"
    assert sorted(n for n in named if not (ROOT / "tests" / "corpus" / n).is_dir()) == []
