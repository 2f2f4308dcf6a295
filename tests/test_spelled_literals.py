"""Patterns spelled out as their strings for Hyperscan (tooling.catalogue.literals) match exactly
where the patterns do: on every pattern the scan and the recogniser hand to the engine, on the
log-line corpus, on each spelled string in the places a word boundary tells apart, and on text
drawn from the pattern itself."""
from __future__ import annotations

import re
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from support import CORPUS
from tooling.catalogue.engine import ENGINE, Matcher
from tooling.catalogue.literals import spelled_out
from tooling.catalogue.recognise import recogniser
from tooling.logs.flagged import matcher

FLAGS = re.IGNORECASE | re.MULTILINE  # as both engines match


@lru_cache(maxsize=1)
def patterns() -> list[str]:
    """Every pattern a Hyperscan database of the scan or the recogniser is compiled from."""
    found = recogniser()
    return sorted({*matcher().patterns, *found.lines.patterns, *found.keywords.patterns})


def spelled() -> list[tuple[str, str]]:
    return [(p, s) for p in patterns() if (s := spelled_out(p)) != p]


def corpus() -> list[str]:
    return sorted({line for path in CORPUS.glob("**/*.txt") for line in path.read_text("utf-8").splitlines()
                   if line.strip() and not line.startswith("#")})


def test_a_small_finite_pattern_is_spelled_out_with_its_boundary() -> None:
    out = spelled_out(r"loss['\"]? ?(is|=|:)? ?(nan|inf|infinity)\b")
    assert out.startswith("(?:") and out.endswith(r")\b")
    strings = out[3:-3].split("|")
    assert len(strings) == 135 and "loss\\x3a\\x20nan" in strings and "loss\\x27is\\x20infinity" in strings


@pytest.mark.parametrize("pattern", [
    r"Xid [0-9]+",  # an unbounded repeat
    r"[a-z]{3} error",  # a wide class
    r"(?i)double bit (ECC|error)",  # a flag of its own
    r"nan|inf",  # strings too short to be a better factor
    r"GPU has fallen off the bus",  # one string: a literal already
    r"(?<!not )found (NaN|Inf)",  # a look-behind
    "(a|b|c|d)(e|f|g|h)(i|j|k|l)(m|n|o|p)(q|r|s|t)",  # 1,024 strings: more than LIMIT
    r"exit(s|ed",  # no pattern at all: left for the engine to refuse
])
def test_what_is_not_a_small_finite_language_is_left_as_it_is(pattern: str) -> None:
    assert spelled_out(pattern) == pattern


def test_the_catalogue_has_patterns_worth_spelling_out() -> None:
    assert len(spelled()) >= 20


def test_spelled_patterns_match_the_corpus_as_the_originals_do() -> None:
    lines = corpus()
    for original, out in spelled():
        before, after = re.compile(original, FLAGS), re.compile(out, FLAGS)
        assert [bool(before.search(line)) for line in lines] == [bool(after.search(line)) for line in lines], original


def test_each_spelled_string_matches_where_the_original_does() -> None:
    """A boundary before or after is kept: the strings in and out of words, at either end."""
    for original, out in spelled():
        before, after = re.compile(original, FLAGS), re.compile(out, FLAGS)
        for string in out.partition("(?:")[2].rpartition(")")[0].split("|"):
            text = re.sub(r"\\x([0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), string)
            for probe in (text, f"x{text}", f"{text}x", f"a {text}.", f"{text}\nnext", f"{text.upper()}O"):
                assert bool(before.search(probe)) == bool(after.search(probe)), (original, probe)


@pytest.mark.skipif(ENGINE != "hyperscan", reason="only Hyperscan is handed spelled patterns")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hyperscan_with_the_spelled_pattern_agrees_with_python_re_on_drawn_text(data: st.DataObject) -> None:
    original, _ = data.draw(st.sampled_from(spelled()))
    ascii_ = st.text(st.characters(max_codepoint=127), max_size=3)  # (Python folds the case of more than ASCII)
    inner = data.draw(st.from_regex(original, fullmatch=True).filter(str.isascii))
    text = data.draw(ascii_) + data.draw(st.sampled_from([inner, inner.upper(), inner.swapcase()])) + data.draw(ascii_)
    expected = [0] if re.compile(original, FLAGS).search(text) else []
    assert Matcher([original], first_only=True).matching(text) == expected, (original, text)
