"""Every number a template formats can be written in every edition (issue 21, defect 1).

The Korean edition once formatted numbers through a table of the format specs written down at
the time; `| fixed(2)` on the repeats page was not in it, so the first similar-incident score
broke `tooling build` (KeyError: '.2f'). Here every use of an edition's formatting filter in
every template is found by parsing the templates, and each is called, with its own arguments,
in both editions, on values of every size: none may fail, and the Korean figures must be the
English ones (Korean writes numbers with the same symbols).
"""
from __future__ import annotations

import re
import shutil
from datetime import date, datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jinja2 import nodes

from support import BOTH_EDITIONS, PROJECT, tooling
from tooling.site.filters import environment, fixed, grouped, number
from tooling.site.i18n import ENGLISH, edition

KOREAN = edition("ko")
EDITIONS = (ENGLISH, KOREAN)
UTC = timezone.utc
NUMBERS = [0, 7, 4096, 10**12, 0.5, 2.675, 29.15, 1293.0, 12345.678, 1e9 + 0.25, -3.75]
DURATIONS = [timedelta(0), timedelta(seconds=59), timedelta(hours=3.5), timedelta(days=100, minutes=7)]
# Values each filter that writes a value by its edition's conventions gets, by filter name: a
# filter of the edition missing here fails test_every_edition_filter_has_samples.
SAMPLES: dict[str, list[Any]] = {
    "fixed": NUMBERS, "grouped": NUMBERS, "number": [*NUMBERS, None], "seconds": NUMBERS,
    "in_hours": [*DURATIONS, None], "hours": [*DURATIONS, None], "elapsed": DURATIONS,
    "dt": [datetime(2026, 11, 30, 16, 0, tzinfo=UTC), "2026-11-30T16:00:00+09:00", "2022-06", None],
    "day": [date(2026, 11, 1), "2026-11-30", "2022-06", "2022", None],
}
NUMERIC = {"fixed", "grouped", "number", "seconds", "in_hours", "hours", "elapsed"}
FIGURES = re.compile(r"[-\d][\d,.]*")


def _edition_filters() -> set[str]:
    """The filters that take the edition (``t``): those whose output depends on the locale."""
    env = environment(ENGLISH)
    return {name for name, f in env.filters.items() if isinstance(f, partial) and "t" in f.keywords}


def _uses() -> list[tuple[str, str, tuple[Any, ...], dict[str, Any]]]:
    """(where, filter, arguments, keyword arguments) of every use of an edition's filter in
    every template; an argument that is not a constant is refused (it could not be checked)."""
    env, found = environment(ENGLISH), []
    edition_filters = _edition_filters()
    for name in env.list_templates(extensions=["j2"]):
        source = env.loader.get_source(env, name)[0]  # type: ignore[union-attr]
        for node in env.parse(source).find_all(nodes.Filter):
            if node.name not in edition_filters:
                continue
            where = f"{name}:{node.lineno} | {node.name}"
            arguments = [*node.args, *(k.value for k in node.kwargs)]
            assert all(isinstance(a, nodes.Const) for a in arguments), f"{where}: an argument that is not a constant"
            found.append((where, node.name, tuple(a.value for a in node.args),
                          {k.key: k.value.value for k in node.kwargs}))
    return found


USES = _uses()


def test_every_edition_filter_has_samples() -> None:
    assert _edition_filters() == set(SAMPLES)


def test_the_walk_finds_the_uses_including_the_score() -> None:
    assert len(USES) > 40
    assert any(w.startswith("repeats.md.j2:") and f == "fixed" and a == (2,) for w, f, a, _ in USES)


@pytest.mark.parametrize("where, name, args, kwargs", USES, ids=[u[0] for u in USES])
def test_every_template_use_writes_every_value_in_both_editions(where: str, name: str, args: tuple[Any, ...],
                                                                 kwargs: dict[str, Any]) -> None:
    filters = {t.lang: environment(t).filters[name] for t in EDITIONS}
    for value in SAMPLES[name]:
        written = {lang: str(f(value, *args, **kwargs)) for lang, f in filters.items()}
        if name in NUMERIC:
            assert FIGURES.findall(written["ko"]) == FIGURES.findall(written["en"]), (value, written)


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15),
       st.integers(min_value=0, max_value=6), st.booleans())
def test_korean_figures_are_the_english_ones(value: float, digits: int, grouping: bool) -> None:
    """Any number of decimals, not only the ones a template uses today; one rounding in both."""
    assert fixed(value, digits, grouping=grouping, t=KOREAN) == fixed(value, digits, grouping=grouping, t=ENGLISH)
    assert grouped(value, t=KOREAN) == grouped(value, t=ENGLISH)
    assert number(value, t=KOREAN) == number(value, t=ENGLISH)


XID_79 = "NVRM: Xid (PCI:0000:ca:00): 79, pid=4242, name=python, GPU has fallen off the bus.\n"


def test_a_scanned_xid_79_renders_in_both_editions(tmp_path: Path) -> None:
    """The issue's steps on this project's records: the draft is similar to an incident on
    record, so the repeats page shows a score, which the Korean edition could not write."""
    root = tmp_path / "repo"
    for name in ("incidents", "runbooks"):
        shutil.copytree(PROJECT / name, root / name)
    (root / "mkdocs.yml").write_text(BOTH_EDITIONS, encoding="utf-8")
    (root / "x.log").write_text(XID_79)
    scan = tooling("scan", "x.log", "--write", "--run", "demo-7b", cwd=root)
    assert scan.returncode == 0, scan.stderr
    drafted = re.search(r"^created (incidents/INC-\d+)\.yaml$", scan.stdout + scan.stderr, re.M)
    assert drafted, scan.stdout + scan.stderr
    build = tooling("build", "--render-only", cwd=root, timeout=120)
    assert build.returncode == 0, build.stderr
    assert build.stderr.startswith("rendered ")
    incident = Path(drafted[1]).name
    ko = (root / "docs/generated/repeats.ko.md").read_text(encoding="utf-8")
    en = (root / "docs/generated/repeats.md").read_text(encoding="utf-8")
    rows = {lang: [line for line in text.splitlines() if line.startswith("| [" + incident.replace("-", "\\-") + "]")]
            for lang, text in (("en", en), ("ko", ko))}
    assert rows["ko"] and rows["ko"] == rows["en"], rows  # the same similar incidents, the same scores
    assert all(re.search(r"\| \d\\\.\d\d \|$", row) for row in rows["ko"]), rows


@pytest.mark.parametrize(("written", "shown"), [
    ("2026-11-10T02:17:00+09:00", "2026-11-09 17:17 UTC"),
    ("2026-11-10T02:17:00-07:00", "2026-11-10 09:17 UTC"),
    ("2026-11-10T02:17:00Z", "2026-11-10 02:17 UTC"),
])
def test_a_time_is_shown_in_utc_whatever_zone_it_was_written_in(written: str, shown: str) -> None:
    """Issue 26: one incident's times showed as +0900 where every other page said UTC."""
    from tooling.site.filters import dt
    assert dt(written) == shown
