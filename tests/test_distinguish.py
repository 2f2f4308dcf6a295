"""The kinds an incident tells by its lines and words (tooling/catalogue/distinguish.yaml): each holds to the texts
it must and must not tell, every kind a mode names is known, and a broken file is one located error."""
from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import fields

import pytest

from tooling.catalogue import distinguish
from tooling.catalogue.checks import text
from tooling.catalogue.codes import Codes
from tooling.catalogue.modes import CatalogueError, catalogue

KINDS = list(distinguish.kinds().values())
OF_THE_RECORD = {"message", "saving"}  # a line's own words; a phase the incident names (tooling.catalogue.phases)


def _incident(said: str) -> dict[str, object]:
    # in its words and as a verbatim line: a kind read from either, or only one, sees it where it looks
    return {"title": said, "signatures": [said]}


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.id)
def test_each_kind_tells_its_texts_and_not_the_others(kind: distinguish.Kind) -> None:
    assert kind.tells and kind.never, f"{kind.id}: each kind shows what it must and must not tell"
    test = distinguish.told(kind.id)
    assert [t for t in kind.tells if not test(_incident(t))] == []
    assert [t for t in kind.never if test(_incident(t))] == []


def test_a_kind_read_from_the_lines_alone_is_not_told_by_the_words() -> None:
    loaded_empty = distinguish.told("loaded-empty")
    line = "size mismatch for w: copying a param with shape torch.Size([4]), shape in current model is torch.Size([0])."
    assert loaded_empty({"signatures": [line]}) and not loaded_empty({"title": line})
    no_gpu = distinguish.told("no-gpu")
    assert no_gpu({"title": "fails on a CPU-only node"}) and not no_gpu({"signatures": ["a CPU-only node"]})


def test_every_kind_a_mode_names_is_known_and_the_schema_allows_each() -> None:
    schema = json.loads(text("failure-modes.schema.json", "tooling.schemas"))
    allowed = set(schema["items"]["properties"]["distinguish"]["items"]["enum"])
    codes = {f.name for f in fields(Codes)}
    known = set(distinguish.kinds()) | codes | OF_THE_RECORD
    assert set(distinguish.kinds()) <= allowed
    assert allowed - known == set()
    named = {kind for mode in catalogue().modes for kind in mode.distinguish}
    assert named - known == set()


@pytest.fixture
def broken(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    distinguish.kinds.cache_clear()
    yield
    monkeypatch.undo()
    distinguish.kinds.cache_clear()


@pytest.mark.parametrize(("written", "error"), [
    ("kinds:\n  x:\n    key: k\n    says: ['a']\n    color: red\n",
     "tooling/catalogue/distinguish.yaml: kinds/x: unknown field 'color'; expected one of: "
     f"{sorted(distinguish.FIELDS)}"),
    ("kinds:\n  x:\n    key: k\n    says: ['{NOPE}']\n",
     "tooling/catalogue/distinguish.yaml: kinds/x/says: no fragment 'NOPE'; expected one of: []"),
    ("kinds:\n  x:\n    key: k\n    says: ['(a']\n",
     "tooling/catalogue/distinguish.yaml: kinds/x/says: the pattern does not compile: "
     "missing ), unterminated subpattern at position 0"),
    ("kinds:\n  x:\n    key: k\n    unless: y\n    says: ['a']\n",
     "tooling/catalogue/distinguish.yaml: kinds/x/unless: no kind 'y'; expected one of: ['x']"),
    ("kinds:\n  x:\n    key: k\n",
     "tooling/catalogue/distinguish.yaml: kinds/x: reads nothing; expected one of: ['says', 'in_lines', 'in_words']"),
])
def test_a_broken_file_is_one_error_that_says_where(broken: None, monkeypatch: pytest.MonkeyPatch,
                                                    written: str, error: str) -> None:
    monkeypatch.setattr(distinguish, "text", lambda name: written)
    with pytest.raises(CatalogueError) as raised:
        distinguish.kinds()
    assert str(raised.value) == error
