"""tooling import bounds what it reads in bytes as well as in count, and refuses early.

A number of thousands of digits was an internal error (int() refuses more than 4,300), a
50 MB JSONL line took minutes to refuse, JSON nested a thousand deep was a RecursionError and a
markdown file of delimiter-like rows was read once per row. Each is now one located line,
exit 1, the repository untouched, at once.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from support import snapshot, tooling
from tooling.errors import UserError
from tooling.intake import fields
from tooling.intake.dates import DateRules
from tooling.intake.fields import mappable
from tooling.intake.jsonl import read_jsonl
from tooling.intake.values import Context, convert

NOW = "2026-11-29T12:00:00+00:00"
DIGITS = "9" * 5000


def _refused(repo: Path, name: str, content: str, error: str, *, seconds: float = 30) -> None:
    """Importing ``content`` as ``name`` is the one line ``error``, within ``seconds``, and
    changes nothing."""
    (repo / name).write_text(content, encoding="utf-8")
    before = snapshot(repo)
    started = time.monotonic()
    result = tooling("--now", NOW, "import", name, cwd=repo, timeout=seconds)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", f"tooling: error: {error}\n")
    assert time.monotonic() - started < seconds
    assert snapshot(repo) == before


@pytest.mark.parametrize(("name", "content", "error"), [
    ("count.csv", f"title,run,occurrences\nHang on node7,demo-7b,{DIGITS}\n",
     "count.csv:2: [number-too-long] column 'occurrences': a number of 5,000 digits; expected at most 40 digits, "
     "more than any count or amount has (nothing was imported)"),
    ("hours.csv", f"title,run,wall_hours\nHang on node7,demo-7b,{DIGITS}.5 days\n",
     "hours.csv:2: [number-too-long] column 'wall_hours': a number of 5,001 digits; expected at most 40 digits, "
     "more than any count or amount has (nothing was imported)"),
    ("ranks.csv", f"title,run,ranks\nHang on node7,demo-7b,\"3, {DIGITS}\"\n",
     "ranks.csv:2: [number-too-long] column 'ranks': a number of 5,000 digits; expected at most 40 digits, "
     "more than any count or amount has (nothing was imported)"),
    ("count.jsonl", f'{{"title": "Hang on node7", "run": "demo-7b"}}\n{{"title": "NaN", "impact": '
                    f'{{"steps_lost": {DIGITS}}}}}\n',
     "count.jsonl:2:1: [number-too-long] impact.steps_lost: a number of 5,000 digits; expected at most 40 digits, "
     "more than any count or amount has"),
], ids=["csv-count", "csv-amount-with-unit", "csv-list", "jsonl-nested"])
def test_a_number_of_thousands_of_digits_is_refused_at_its_row_not_an_internal_error(
        repo: Path, name: str, content: str, error: str) -> None:
    """Was exit 3: int() of more than 4,300 digits raises ValueError."""
    _refused(repo, name, content, error)


@pytest.mark.parametrize(("name", "content", "error"), [
    ("long.jsonl", '{"title": "Hang on node7", "run": "demo-7b"}\n{"title": "' + "x" * (50 << 20) + '"}\n',
     "long.jsonl:2:1: [row-too-large] a row of 52,428,813 bytes; expected at most 1,048,576 bytes, what one "
     "record file may hold"),
    ("cell.csv", 'title,run,notes\nHang,demo-7b,"' + "가" * 400_000 + '"\n',
     "cell.csv:2:1: [row-too-large] a row of 1,200,011 bytes; expected at most 1,048,576 bytes, what one "
     "record file may hold"),
    ("wide.md", "| title | run |\n|---|---|\n| Hang | demo-7b |\n| NaN | demo-7b" + " | x" * 300_000 + " |\n",
     "wide.md:4:1: [row-too-large] a row of 1,200,017 bytes; expected at most 1,048,576 bytes, what one "
     "record file may hold"),
    ("deep.jsonl", '{"title": "Hang", "run": "demo-7b", "timeline": ' + "[" * 5000 + "]" * 5000 + "}\n",
     "deep.jsonl:1:1: [too-deep] JSON nested more than 16 levels deep; expected an incident's fields "
     "(a record nests three deep)"),
    ("shallow.jsonl", '{"title": "Hang", "run": "demo-7b", "impact": {"x": ' + "[" * 20 + "]" * 20 + "}}\n",
     "shallow.jsonl:1:1: [too-deep] impact.x.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0: JSON nested more than 16 levels deep; "
     "expected an incident's fields (a record nests three deep)"),
    ("columns.csv", ",".join(f"c{i}" for i in range(1001)) + "\nx\n",
     "columns.csv:1:1: [too-many-columns] 1,001 columns; expected at most 1,000"),
    ("keys.jsonl", '{"title": "Hang", "run": "demo-7b"}\n{' + ", ".join(f'"k{i}": 1' for i in range(1000)) + "}\n",
     "keys.jsonl:2:1: [too-many-columns] 1,002 columns; expected at most 1,000"),
], ids=["jsonl-50-MB-line", "csv-cell-in-bytes", "markdown-row", "json-nesting", "json-nesting-named",
        "csv-header", "jsonl-keys"])
def test_a_row_past_a_bound_is_refused_before_it_is_read_as_one(repo: Path, name: str, content: str,
                                                                 error: str) -> None:
    """The 50 MB line took three minutes to refuse (34 s on a fast machine), and was refused
    only when its record was written; a cell of 128 Ki characters was csv's own error, one of
    fewer characters but more bytes was read; JSON a thousand deep was a RecursionError."""
    _refused(repo, name, content, error, seconds=20)


def test_rows_that_look_like_table_delimiters_are_read_once_each(repo: Path) -> None:
    """Every header-and-delimiter pair started a table read to the end of the file: 60,000 such
    lines took more than two minutes (quadratic), now seconds."""
    lines = ["| title | run |", "|---|---|"] * 30_000
    content = "\n".join(lines[:2] + ["| Hang on node7 | nowhere-run |"] + lines[2:]) + "\n"
    nowhere = ("the row names no run of this repository and no cluster, and neither --run or --cluster nor the "
               "mapping's defaults.run or defaults.cluster says where it goes; expected one of them")
    _refused(repo, "pairs.md", content, "".join(f"pairs.md:{n}: {nowhere}\n" for n in range(3, 23))
             + "... and 59979 more\n(nothing was imported)", seconds=60)  # quadratic: over 2 min; now 7.6 s at load 10, over 20 s at 12


def test_a_count_of_thousands_of_digits_in_free_text_guesses_nothing(repo: Path) -> None:
    """'happened 999...9 times' in a description was int() of every digit (an internal error);
    a rank written with a digit int() cannot read ('²') was one too."""
    (repo / "text.csv").write_text(f"title,run,description,ranks\nHang on node7,demo-7b,happened {DIGITS} times,²\n")
    result = tooling("--now", NOW, "import", "text.csv", "--dry-run", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert "occurrences" not in result.stdout
    assert "text.csv:2: [unmapped] ranks: '²' (column 'ranks': '²' is not a whole number >= 0; kept in notes)\n" \
        in result.stdout


CONTEXT = Context({}, {}, DateRules(), ("demo-7b",))
NUMERIC = [n for n in mappable() if fields.shape(n) in ("int", "number", "ints")]
digits = st.integers(1, 6000).map(lambda n: "9" * n)
cells = st.lists(st.one_of(digits, st.text(alphabet="0123456789.,- hdkmx²٣\u2212", max_size=12), st.text(max_size=8)),
                 max_size=4).map("".join)


@given(name=st.sampled_from(NUMERIC), cell=cells)
def test_a_number_cell_is_a_value_unmapped_or_refused_never_a_crash(name: str, cell: str) -> None:
    """Whatever a cell of a count, an amount or a list of ranks holds, it becomes a value, is
    unmapped (kept in notes), or is refused for its digits: never another exception."""
    try:
        convert(name, cell, "c", CONTEXT)
    except UserError as exc:
        assert str(exc).startswith("[number-too-long] column 'c': a number of "), exc


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.text(max_size=5), st.floats(allow_nan=False, allow_infinity=False),
              st.integers(-10**60, 10**60), st.integers(1, 6000).map(lambda n: f"@@{n}@@")),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=40)


@example(rows=[{"title": {"\n": "@@41@@"}}])  # a key with a line break was a second line of the error
@given(rows=st.lists(st.dictionaries(st.sampled_from(["title", "run", "impact", "timeline", "x"]), json_values,
                                     max_size=4), min_size=1, max_size=3))
def test_a_jsonl_line_is_a_row_or_one_located_refusal(rows: list[dict]) -> None:
    """Any JSON object, however nested and whatever its numbers, is read as a row or refused
    with the located line of the bound it passes: never a RecursionError or int()'s ValueError."""
    # a number of more digits than int() converts (4,300) is written into the text as digits
    text = re.sub(r'"@@(\d+)@@"', lambda m: "9" * int(m[1]), "".join(json.dumps(r) + "\n" for r in rows))
    try:
        table = read_jsonl(Path("h.jsonl"), text)
    except UserError as exc:
        assert re.fullmatch(r"h\.jsonl:\d+:1: \[(too-deep|number-too-long)\] .*", str(exc)), exc
    else:
        assert [r.line for r in table.rows] == list(range(1, len(rows) + 1))
