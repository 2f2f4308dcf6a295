"""Caseless (tooling.catalogue.signatures): the fast way of asking whether a line has an error word
or a progress report must answer as the case-insensitive expression does, for any line: ASCII
lines are searched lower-cased, others as they are (Unicode folds "ſ" to "s", "K" to "k")."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from tooling.catalogue.signatures import PROGRESS, Caseless, _ERROR_WORDS

ERROR_WORDS = _ERROR_WORDS._any_case.pattern
# pieces of what the expressions look for, in every case, and the characters Unicode folds onto ASCII
PIECES = ["error", "ERROR", "Fail", "nan", "NaN", "inf", "INF", "down", "not found", "Iteration", "step",
          "global_step", "loss", "LM LOSS", "|", ":", "=", "/", " ", "12", "3", "x", "\u017f", "\u0130", "\u0131",
          "\u212a", "\u00df", "KILLED", "ki\u0131led", "\u212ailled", "warn", "tim\u0130ng"]
LINES = st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=12).map("".join)


@settings(max_examples=400, deadline=None)
@given(LINES)
def test_caseless_answers_as_the_case_insensitive_expression(line: str) -> None:
    for pattern in (ERROR_WORDS, PROGRESS):
        expected = re.search(pattern, line, re.IGNORECASE) is not None
        assert Caseless(pattern).found(line) is expected, (pattern[:30], line)


def test_unicode_folding_is_kept_where_lowering_would_lose_it() -> None:
    # "ſ" is an "s" to re.IGNORECASE but stays "ſ" lower-cased: the line is searched as it is
    assert Caseless("segmentation").found("\u017fegmentation fault")
    assert Caseless(ERROR_WORDS).found("\u212aILLED by the OOM killer")
    assert not Caseless(ERROR_WORDS).found("checkpoint writer stalled")


def test_a_pattern_not_written_lower_case_is_refused() -> None:
    with pytest.raises(AssertionError):
        Caseless(r"\S+ error")  # lower-cased, \S (not a space) would read as \s (a space)
