"""The failure modes' example lines (tooling/catalogue/examples.yaml), which the site shows as what
each mode looks like in a log: every line is in the public corpus the recognisers are proven on
(tests/corpus/loglines/<mode>.txt) verbatim, under the source it names, and is recognised as its own
mode; every mode that has proven lines has an example.
"""
from __future__ import annotations

import pytest

from support import CORPUS
from tooling.catalogue.examples import examples, examples_of
from tooling.catalogue.modes import catalogue
from tooling.catalogue.recognise import recognise

LOGLINES = CORPUS / "loglines"


def _sourced_lines(mode_id: str) -> list[tuple[str, str]]:
    """(source URL, line trimmed) of each log line of the mode's corpus file."""
    found, source = [], ""
    for raw in (LOGLINES / f"{mode_id}.txt").read_text("utf-8").splitlines():
        if raw.startswith("# source: "):
            source = raw.removeprefix("# source: ").split(" ", 1)[0]
        elif raw.strip() and not raw.startswith("#"):
            found.append((source, raw.strip()))
    return found


@pytest.mark.parametrize("mode_id", sorted(examples()))
def test_each_example_is_a_proven_line_of_its_mode(mode_id: str) -> None:
    assert catalogue().get(mode_id) is not None, f"{mode_id} is not a mode of the catalogue"
    proven = _sourced_lines(mode_id)
    for example in examples_of(mode_id):
        assert (example.source, example.line) in proven, f"{example.line!r} is not in {mode_id}.txt under its source"
        found = recognise(example.line).mode
        assert found is not None and found.id == mode_id, f"{example.line!r} reads as {found and found.id}"


def test_every_mode_with_proven_lines_has_an_example() -> None:
    proven = {m.id for m in catalogue().modes if (LOGLINES / f"{m.id}.txt").exists()}
    assert sorted(proven - set(examples())) == []
    assert all(1 <= len(found) <= 2 for found in examples().values())
