"""The message catalogues of the generated pages: current, and complete in Korean.

The extraction is tooling/locale/README.md's own command, run here in-process: the committed
messages.pot must be what it makes, and every message it finds must have a Korean translation
(not missing, not empty, not fuzzy, with the same %(name)s placeholders). Words the analyses and
schemas hand the pages (tooling/site/words.py), and the sentences they say (tooling.messages), are
checked by feeding every one of them through.
"""
from __future__ import annotations

import os
import re
import shlex
from datetime import datetime
from io import BytesIO
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.frontend import CommandLineInterface
from babel.messages.pofile import read_po, write_po

from tooling.analysis import analyse
from tooling.analysis.budget import compute
from tooling.analysis.candidates import AVAILABILITY, STATES
from tooling.analysis.identity import Identity
from tooling.analysis.paging import meanings
from tooling.analysis.repeats import ALONE, MARKED, SIMILAR, STATED
from tooling.messages import message, render
from tooling.records.layout import record_dirs
from tooling.rules.validate import validate
from tooling.site import words
from tooling.site.i18n import LOCALE_DIR, catalogue_path, edition
from tooling.site.reference import field_reference

PROJECT = Path(__file__).resolve().parents[1]
README = LOCALE_DIR / "README.md"
HANGUL = re.compile(r"[\uac00-\ud7a3]")
PLACEHOLDER = re.compile(r"%\((\w+)\)s|%%")


def _extract_command() -> list[str]:
    """The README's `pybabel extract` line, as arguments."""
    line = next(line for line in README.read_text(encoding="utf-8").splitlines()
                if line.startswith("$ ") and "pybabel extract" in line)
    return shlex.split(line.removeprefix("$ "))[1:]


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """What the README's command extracts from the code today."""
    out = tmp_path_factory.mktemp("pot") / "messages.pot"
    args = _extract_command()
    args[args.index("-o") + 1] = str(out)
    cwd = os.getcwd()
    os.chdir(PROJECT)
    try:
        CommandLineInterface().run(["pybabel", "--quiet", *args])
    finally:
        os.chdir(cwd)
    with out.open("rb") as pot:
        return read_po(pot)


def _entries(catalog: Catalog) -> dict[object, tuple[object, ...]]:
    return {m.id: (m.context, tuple(sorted(m.locations)), tuple(sorted(m.flags - {"fuzzy"})))
            for m in catalog if m.id}


def problems(template: Catalog, translations: Catalog) -> list[str]:
    """Every message of ``template`` that a page would show untranslated, and every translation
    whose placeholders differ from its message's, one line each."""
    out = []
    for message in template:
        if not message.id:
            continue
        shown = message.id if isinstance(message.id, str) else message.id[0]
        found = translations.get(message.id, message.context)
        strings = () if found is None else (found.string if isinstance(found.string, tuple) else (found.string,))
        if found is None:
            out.append(f"missing: {shown!r}")
        elif found.fuzzy:
            out.append(f"fuzzy: {shown!r}")
        elif not all(strings):
            out.append(f"empty: {shown!r}")
        elif any(sorted(PLACEHOLDER.findall(s)) != sorted(PLACEHOLDER.findall(shown)) for s in strings):
            out.append(f"placeholders differ: {shown!r} -> {strings!r}")
    return out


def _korean() -> Catalog:
    with catalogue_path("ko").open("rb") as po:
        return read_po(po, locale="ko")


def test_messages_pot_is_what_the_extraction_makes(extracted: Catalog) -> None:
    with (LOCALE_DIR / "messages.pot").open("rb") as pot:
        committed = _entries(read_po(pot))
    fresh = _entries(extracted)
    stale = sorted(repr(k) for k in fresh.keys() ^ committed.keys())
    moved = sorted(repr(k) for k in fresh.keys() & committed.keys() if fresh[k] != committed[k])
    assert (stale, moved) == ([], []), (
        "tooling/locale/messages.pot is stale; run the commands of tooling/locale/README.md. "
        f"Added or removed: {stale}; moved or reflagged: {moved}")


def test_every_message_has_a_korean_translation(extracted: Catalog) -> None:
    assert problems(extracted, _korean()) == []


def test_the_check_names_each_untranslated_message() -> None:
    template = Catalog()
    for text in ("Incident log", "Owner", "Budget", "Due", "%(count)s overdue"):
        template.add(text)
    ko = Catalog(locale="ko")
    ko.add("Incident log", "인시던트 로그")
    ko.add("Owner", "담당자", flags=["fuzzy"])
    ko.add("Budget", "")
    ko.add("%(count)s overdue", "기한 초과")
    assert problems(template, ko) == ["fuzzy: 'Owner'", "empty: 'Budget'", "missing: 'Due'",
                                      "placeholders differ: '%(count)s overdue' -> ('기한 초과',)"]


def test_a_fuzzy_or_empty_entry_falls_back_to_english_at_build_time(tmp_path: Path) -> None:
    """What the compiled catalogue does with what the check refuses: English, never a guess."""
    ko = Catalog(locale="ko")
    ko.add("Owner", "담당자", flags=["fuzzy"])
    ko.add("Budget", "")
    ko.add("Due", "기한")
    buffer = BytesIO()
    write_po(buffer, ko)
    folder = tmp_path / "xx" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "messages.po").write_bytes(buffer.getvalue())
    from tooling.site import i18n
    original = i18n.LOCALE_DIR
    i18n.LOCALE_DIR = tmp_path
    try:
        compiled = i18n.translations("xx")
    finally:
        i18n.LOCALE_DIR = original
        i18n.translations.cache_clear()
    assert [compiled.gettext(m) for m in ("Owner", "Budget", "Due")] == ["Owner", "Budget", "기한"]


def test_the_readme_says_how_to_update_the_korean_catalogue() -> None:
    text = README.read_text(encoding="utf-8")
    assert "pybabel update -i tooling/locale/messages.pot -d tooling/locale" in text
    assert "-F tooling/locale/babel.cfg" in " ".join(_extract_command())


def test_every_word_the_analyses_hand_the_pages_is_translated() -> None:
    """Fixed words by their tables, and each budget warning as an analysis says it."""
    ko, po = edition("ko"), _korean()
    fixed = {"state": [*STATES, *AVAILABILITY], "meaning": list(meanings().values()),
             "kind title": [k.title for k in field_reference()],
             "facet": list(words.FACETS.values())}
    untranslated = [(kind, w) for kind, values in fixed.items() for w in values
                    if not (po.get(w) and po.get(w).string)]
    types = {f.type for k in field_reference() for f in k.fields}
    untranslated += [("type", t) for t in types if not HANGUL.search(words.field_type(t, ko))]
    flags = [*compute({"gpu_hours": 100, "price_per_gpu_hour": 1, "checkpoint_storage_tb": 12,
                       "storage_price_per_tb_month": 1, "months": 1}, rotation_size=1).flags,
             *compute({"gpu_hours": 100, "price_per_gpu_hour": 1, "checkpoint_storage_tb": 7,
                       "storage_price_per_tb_month": 1, "months": 1}, rotation_size=3).flags]
    assert len(flags) == 3
    untranslated += [("budget flag", str(f)) for f in flags if not HANGUL.search(words.say(f, ko))]
    assert untranslated == []


def test_a_budget_warning_is_english_for_the_cli_and_korean_on_the_page_from_the_same_values() -> None:
    storage, people = compute({"gpu_hours": 100, "price_per_gpu_hour": 1, "checkpoint_storage_tb": 12,
                               "storage_price_per_tb_month": 1, "months": 1}, rotation_size=1).flags
    assert [str(storage), str(people)] == [
        "checkpoint storage is 12% of the GPU cost, above 10%: prune old checkpoints or move them to colder storage",
        "1 person on call: a 24/7 run needs at least 2 on the rotation (4 is better)"]
    assert [words.say(storage, edition("ko")), words.say(people, edition("ko"))] == [
        "체크포인트 스토리지가 GPU 비용의 12%로 10%를 넘습니다. 오래된 체크포인트를 정리하거나 더 싼 스토리지로 옮기세요",
        "온콜 인원이 1명입니다. 24시간 돌아가는 학습에는 로테이션에 최소 2명이 필요합니다(4명이면 더 좋습니다)"]
    assert words.say(storage, edition("en")) == str(storage)


def test_every_reason_of_the_bundled_candidates_is_translated() -> None:
    report = validate(record_dirs(PROJECT), root=PROJECT, now=datetime.fromisoformat("2026-11-29T12:00:00+00:00"))
    analysis = analyse(report.records, now=datetime.fromisoformat("2026-11-29T12:00:00+00:00"))
    error = Identity(("text", "nccl watchdog timeout"), None).why(["exit 134"])
    hbm = Identity(("mode", "gpu.hbm-ecc", "xid=79"), None).why(["Xid 79"])
    earlier = [Identity(("text", "x y z"), None).same, Identity(("mode", "gpu.hbm-ecc"), None).same,
               message(SIMILAR, score="0.54")]  # what `tooling new-incident` says of earlier incidents
    stated = message(STATED, phrase="again")
    said = [m for c in analysis.candidates for m in c.reason] + [MARKED, ALONE, error, stated, *earlier]
    ko = edition("ko")
    english = {str(m): words.say(m, ko) for m in said if not HANGUL.search(words.say(m, ko))}
    assert english == {} and len(analysis.candidates) >= 2
    assert words.say((hbm, MARKED), ko) == "고장 유형 gpu.hbm-ecc (Xid 79); repeat_of로 표시됨"
    assert render((hbm, MARKED)) == "failure mode gpu.hbm-ecc (Xid 79); marked repeat_of"
    assert [str(error), *map(str, earlier)] == ["error 'nccl watchdog timeout' (exit 134)", "same error 'x y z'",
                                                "same failure mode gpu.hbm-ecc", "similar wording (0.54)"]
    assert [words.say(m, ko) for m in earlier] == ["같은 에러 'x y z'", "같은 고장 유형 gpu.hbm-ecc", "비슷한 문구 (0.54)"]
    assert (str(stated), words.say(stated, ko)) == ("the record says it happened before ('again')",
                                                    "기록에 이전에도 일어났다고 적혀 있음 ('again')")
