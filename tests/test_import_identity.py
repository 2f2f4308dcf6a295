"""A logbook row's identity is its content, not the file's name and the row's place.

The same logbook saved under another name imported every row again; a logbook with its rows
sorted otherwise did too; another logbook that happened to have the old one's name had its
rows skipped as imported before.
"""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from support import snapshot, tooling
from tooling.intake.row_identity import Identities

NOW = "2026-11-29T12:00:00+00:00"
ROWS = [
    {"title": "Rank 3 hung in all-gather", "run": "demo-7b", "detected_at": "2024-05-02", "severity": "sev2"},
    {"title": "Loss went NaN at step 5k", "run": "demo-7b", "detected_at": "2024-05-03", "severity": ""},
    {"title": "Checkpoint write failed on /ckpt", "run": "demo-7b", "detected_at": "2024-05-04", "severity": "sev3"},
]


def _csv(rows: list[dict[str, str]], columns: list[str], *, newline: str = "\n") -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, lineterminator=newline)
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _import(repo: Path, name: str, content: str):
    (repo / name).write_text(content, newline="")
    return tooling("--now", NOW, "import", name, cwd=repo)


def test_the_same_logbook_under_another_name_with_rows_and_columns_reordered_imports_nothing_new(repo: Path) -> None:
    first = _import(repo, "ops.csv", _csv(ROWS, ["title", "run", "detected_at", "severity"]))
    assert first.returncode == 0, first.stderr
    assert first.stderr.startswith("ops.csv: 3 rows: 3 created (INC-0003..INC-0005), 0 imported before;")
    before = snapshot(repo)
    # saved again by a spreadsheet: another name, rows sorted otherwise, columns moved, CRLF
    again = _import(repo, "ops-2024-export.csv",
                    _csv(ROWS[::-1], ["severity", "detected_at", "title", "run"], newline="\r\n"))
    assert (again.returncode, again.stderr) == (0, "ops-2024-export.csv: 3 rows: 0 created, 3 imported before; "
                                                   "0 guesses, 0 unmapped values\n")
    assert again.stdout == ("ops-2024-export.csv:2: [skipped] row 2 (imported before as INC-0005)\n"
                            "ops-2024-export.csv:3: [skipped] row 3 (imported before as INC-0004)\n"
                            "ops-2024-export.csv:4: [skipped] row 4 (imported before as INC-0003)\n")
    assert snapshot(repo) == {**before, "ops-2024-export.csv": (repo / "ops-2024-export.csv").read_bytes()}


def test_another_logbook_under_a_name_used_before_is_imported_and_an_edited_row_is_new(repo: Path) -> None:
    assert _import(repo, "log.csv", _csv(ROWS[:2], ["title", "run", "detected_at", "severity"])).returncode == 0
    other = [ROWS[2], {**ROWS[1], "severity": "sev1"}]  # another team's log.csv: row 2 is not the old row 2
    result = _import(repo, "log.csv", _csv(other, ["title", "run", "detected_at", "severity"]))
    assert (result.returncode, result.stderr) == (0, "log.csv: 2 rows: 2 created (INC-0005..INC-0006), "
                                                     "0 imported before; 7 guesses, 0 unmapped values\n")


def test_a_row_listed_twice_is_two_incidents_and_a_rerun_adds_neither_again(repo: Path) -> None:
    twice = _csv([ROWS[0], ROWS[1], ROWS[0]], ["title", "run", "detected_at", "severity"])
    assert "3 created (INC-0003..INC-0005)" in _import(repo, "twice.csv", twice).stderr
    rerun = _import(repo, "copy.csv", twice)
    assert rerun.stderr == "copy.csv: 3 rows: 0 created, 3 imported before; 0 guesses, 0 unmapped values\n"
    assert rerun.stdout.splitlines()[2] == "copy.csv:4: [skipped] row 4 (imported before as INC-0005)"


def test_a_row_imported_before_rows_had_an_identity_is_still_known_by_its_file_and_row(repo: Path) -> None:
    """Markers written before this change (`imported from FILE row N`) are not imported twice."""
    assert _import(repo, "old.csv", _csv(ROWS[:1], ["title", "run", "detected_at", "severity"])).returncode == 0
    record = repo / "incidents" / "INC-0003.yaml"
    text = record.read_text()
    marker = text[text.index("imported from old.csv row 2"):].split("\n", 1)[0]
    record.write_text(text.replace(marker, "imported from old.csv row 2"))
    again = _import(repo, "old.csv", _csv(ROWS[:1], ["title", "run", "detected_at", "severity"]))
    assert again.stdout == "old.csv:2: [skipped] row 2 (imported before as INC-0003)\n"


def test_references_follow_rows_imported_before_whatever_the_file_is_called(repo: Path) -> None:
    rows = [{"id": "OPS-1", "title": "Rank 3 hung in all-gather", "run": "demo-7b", "repeat_of": ""},
            {"id": "OPS-2", "title": "Rank 3 hung in all-gather again", "run": "demo-7b", "repeat_of": "OPS-1"}]
    assert _import(repo, "a.csv", _csv(rows[:1], ["id", "title", "run", "repeat_of"])).returncode == 0
    result = _import(repo, "b.csv", _csv(rows, ["id", "title", "run", "repeat_of"]))
    assert result.returncode == 0, result.stderr
    assert 'b.csv:2: [skipped] id "OPS-1" (imported before as INC-0003)\n' in result.stdout
    assert "repeat_of: INC-0003\n" in (repo / "incidents" / "INC-0004.yaml").read_text()


cell = st.one_of(st.just(""), st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12))
rows = st.lists(st.dictionaries(st.sampled_from(["title", "run", "notes", "Area", "id"]), cell, min_size=1),
                min_size=1, max_size=8)


@given(rows=rows, order=st.randoms(use_true_random=False), data=st.data())
def test_identities_do_not_depend_on_the_order_of_rows_or_columns_or_on_line_endings(
        rows: list[dict[str, str]], order, data: st.DataObject) -> None:
    """The identities of a logbook's rows are the same set however its rows and columns are
    ordered and its line endings written; distinct rows (after that) have distinct identities;
    identical rows have one each."""
    shuffled = [dict(sorted(r.items(), key=lambda _: order.random())) for r in rows]
    order.shuffle(shuffled)
    crlf = data.draw(st.booleans())
    # saved again on Windows: every line break, whatever it was, written as CRLF
    resaved = [{k: re.sub(r"\r\n|\r|\n", "\r\n", v) if crlf else v for k, v in r.items()} for r in shuffled]
    first, second = Identities(), Identities()
    ids = [first.of(r) for r in rows]
    assert sorted(ids) == sorted(second.of(r) for r in resaved)
    assert len(set(ids)) == len(ids)  # one each, for a row listed twice too
    same = {tuple(sorted((k, v.replace("\r\n", "\n").replace("\r", "\n").strip()) for k, v in r.items()
                         if v.strip())) for r in rows}
    assert len({i.split(" #")[0] for i in ids}) == len(same)
