"""What each failure mode looks like in a log: public verbatim lines, for people to read.

The recognisers (failure_modes.yaml) are regular expressions, written for the machine; a reader
paged at 3 a.m. compares the line in front of them with lines of the same failure. Those come
from ``examples.yaml`` beside this module: up to two lines a mode, copied from the public corpus
the recognisers are proven on (tests/corpus/loglines), each with the page it was taken from.
tests/test_catalogue_examples.py holds each line to be in that corpus verbatim and to be
recognised as its own mode, so an example never shows a line the tool would read otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from tooling.catalogue.checks import text
from tooling.catalogue.modes import CatalogueError
from tooling.records.load import parse_text  # the one YAML reader


@dataclass(frozen=True)
class Example:
    line: str  # verbatim, whitespace trimmed
    source: str  # the public page it was taken from


@lru_cache(maxsize=1)
def examples() -> dict[str, tuple[Example, ...]]:
    """Mode id -> its example lines (a mode without any is absent)."""
    loaded = parse_text("tooling/catalogue/examples.yaml", text("examples.yaml", "tooling.catalogue"))
    if loaded.findings:
        raise CatalogueError(f"the failure-mode examples are broken: {loaded.findings[0].format()}")
    data = loaded.data or {}
    return {mode: tuple(Example(str(e["line"]), str(e["source"])) for e in found) for mode, found in data.items()}


def examples_of(mode_id: str) -> tuple[Example, ...]:
    return examples().get(mode_id, ())
