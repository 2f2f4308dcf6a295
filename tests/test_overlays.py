"""Korean overlays of the ladders and the stack: loaded, validated against their English records,
merged for the Korean edition; the full located text of each finding is asserted."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from support import PROJECT, tooling
from tooling.records.load import load_file
from tooling.records.model import Record
from tooling.records.overlays import SHAPES, apply_overlay, pair, texts

RUNBOOKS = PROJECT / "runbooks"
ENGLISH = sorted(p for p in (RUNBOOKS / "ladders").glob("*.yaml") if "." not in p.stem) + [RUNBOOKS / "stack.yaml"]
HANGUL = re.compile("[가-힣]")


def _record(path: Path) -> Record:
    loaded = load_file(str(path))
    assert loaded.findings == []
    return Record(str(path), loaded.data)


def _overlay(english: Path) -> Path:
    return english.with_name(f"{english.stem}.ko.yaml")


def _repo(tmp_path: Path, ladder: str = "crash") -> Path:
    """The English ladder and stack with their Korean overlays, as the repository has them."""
    (tmp_path / "runbooks" / "ladders").mkdir(parents=True)
    for name in (f"ladders/{ladder}.yaml", f"ladders/{ladder}.ko.yaml", "stack.yaml", "stack.ko.yaml"):
        shutil.copy(RUNBOOKS / name, tmp_path / "runbooks" / name)
    return tmp_path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_every_ladder_and_the_stack_has_a_korean_overlay_and_all_validate_strictly() -> None:
    assert [p.name for p in ENGLISH if not _overlay(p).is_file()] == []
    result = tooling("validate", "--strict", "runbooks", cwd=PROJECT)
    assert (result.returncode, result.stdout) == (0, "")


@pytest.mark.parametrize("english", ENGLISH, ids=[p.stem for p in ENGLISH])
def test_the_korean_record_has_korean_text_and_the_english_record_everything_else(english: Path) -> None:
    original = _record(english)
    merged = apply_overlay(original, _record(_overlay(english))).data
    shape = SHAPES[original.kind]
    assert {k: v for k, v in merged.items() if k not in shape.texts and k not in shape.lists} == \
        {k: v for k, v in original.data.items() if k not in shape.texts and k not in shape.lists}
    for name, items in shape.lists.items():
        assert len(merged[name]) == len(original.data[name])
        for ours, theirs in zip(merged[name], original.data[name]):  # commands, costs, layers: English
            assert {k: v for k, v in ours.items() if k not in items.shape.texts and k not in items.shape.lists} == \
                {k: v for k, v in theirs.items() if k not in items.shape.texts and k not in items.shape.lists}
    pairs = list(zip(texts(shape, merged), texts(shape, original.data)))
    assert [t for t, e in pairs if not HANGUL.search(t) and t != e] == []
    # what is not Korean is kept exactly as the software prints it: a log line, a command
    kept = {t for t, e in pairs if t == e}
    assert kept <= _commands_and_log_lines(original.data)


def _commands_and_log_lines(data: dict) -> set[str]:
    """The stack's signals and cheapest checks (a ladder's text has none: its commands are apart)."""
    modes = [m for layer in data.get("layers", []) for m in layer["failure_modes"]]
    return {s for m in modes for s in m["signals"]} | {m["cheapest_check"] for m in modes}


_EN_STEPS = re.compile(r"\bsteps? (\d+(?:(?:, | and | to |, and )\d+)*)")
_KO_STEPS = re.compile(r"(\d+(?:(?:, |~)\d+)*)단계")


def _named(pattern: re.Pattern[str], text: str) -> list[int]:
    return sorted({int(n) for m in pattern.findall(" ".join(text.split())) for n in re.findall(r"\d+", m)})


@pytest.mark.parametrize("english", ENGLISH[:-1], ids=[p.stem for p in ENGLISH[:-1]])
def test_each_korean_step_sends_the_reader_to_the_same_steps(english: Path) -> None:
    """'go to step 7' must stay '7단계' in the translation: a wrong number at 3 a.m. costs an hour."""
    theirs, ours = _record(english).data["steps"], _record(_overlay(english)).data["steps"]
    for number, (e, k) in enumerate(zip(theirs, ours), 1):
        for field in ("name", "expect", "look_for", "next"):
            assert (number, field, _named(_KO_STEPS, k.get(field, ""))) == \
                (number, field, _named(_EN_STEPS, e.get(field, "")))


@pytest.mark.parametrize("english", ENGLISH[:-1], ids=[p.stem for p in ENGLISH[:-1]])
def test_a_step_left_out_anywhere_is_named_and_the_others_keep_their_translation(english: Path) -> None:
    theirs, ours = _record(english).data["steps"], _record(_overlay(english)).data["steps"]
    items = SHAPES["ladder"].lists["steps"]
    for gone in range(len(ours)):
        lined = pair(theirs, ours[:gone] + ours[gone + 1:], items)
        assert (gone, lined.missing, lined.extra) == (gone, [gone], [])
        assert lined.pairs == [(e, e if e < gone else e - 1) for e in range(len(theirs)) if e != gone]


def test_a_step_missing_in_the_middle_is_located_and_the_page_shows_its_english_text(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    overlay = root / "runbooks" / "ladders" / "crash.ko.yaml"
    text = overlay.read_text(encoding="utf-8")
    step5, step6 = text.index("  - name: SLURM이"), text.index("  - name: InfiniBand")
    overlay.write_text(text[:step5] + text[step6:], encoding="utf-8")
    result = tooling("validate", cwd=root)
    assert (result.returncode, result.stdout) == (0, (
        "runbooks/ladders/crash.ko.yaml:15:1: [overlay-missing] warning: step 5 is not translated; "
        "expected the translation of crash.yaml:86:5\n"))
    assert result.stderr == "4 files checked: 0 errors, 1 warning\n"
    strict = tooling("validate", "--strict", cwd=root)
    assert (strict.returncode, strict.stdout) == (1, result.stdout.replace("warning: ", ""))
    steps = apply_overlay(_record(RUNBOOKS / "ladders" / "crash.yaml"), _record(overlay)).data["steps"]
    assert steps[4]["name"] == "Nodes SLURM has drained or marked down"
    assert [s["name"] for s in steps[3:6:2]] == ["체크포인트, 데이터, 로그 마운트의 디스크 공간과 inode",
                                                  "InfiniBand 링크 상태와 속도"]


def test_an_overlay_of_no_english_record_is_located_and_strict_fails(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "runbooks" / "ladders" / "crahs.ko.yaml").write_text(
        "kind: ladder-overlay\nid: crahs\nlang: ko\ntitle: 오타가 난 사다리\n", encoding="utf-8")
    result = tooling("validate", cwd=root)
    line = ("runbooks/ladders/crahs.ko.yaml:2:5: [overlay-unknown] warning: no ladder 'crahs' to translate; "
            "expected the id of an English ladder (runbooks/ladders/crahs.yaml)\n")
    assert (result.returncode, result.stdout) == (0, line)
    strict = tooling("validate", "--strict", "runbooks/ladders/crahs.ko.yaml", cwd=root)
    assert (strict.returncode, strict.stdout, strict.stderr) == (1, line.replace("warning: ", ""),
                                                                 "1 file checked: 1 error, 0 warnings\n")


def test_a_yaml_error_in_an_overlay_is_located_and_nothing_else_is_reported(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    overlay = root / "runbooks" / "ladders" / "crash.ko.yaml"
    # a colon in running text, as in "다음: 5단계", is the translator's usual YAML mistake
    _edit(overlay, "  - name: SLURM이 drain하거나", "  - name: 다음: SLURM이 drain하거나")
    before = overlay.read_bytes()
    result = tooling("validate", cwd=root)
    assert (result.returncode, result.stdout) == (1, (
        "runbooks/ladders/crash.ko.yaml:60:13: [yaml-syntax] mapping values are not allowed in this context; "
        "expected valid YAML\n"))
    assert result.stderr == "4 files checked: 1 error, 0 warnings\n" and overlay.read_bytes() == before


@pytest.mark.parametrize("path, old, new, line", [
    ("ladders/crash.ko.yaml", "7단계로 돌아갑니다.\n", "7단계로 돌아갑니다.\n  - name: 덤으로 붙인 단계\n",
     "runbooks/ladders/crash.ko.yaml:108:5: [overlay-unknown] warning: step 10 is not in crash.yaml (it has 9 steps); "
     "expected only the steps of the English text"),
    ("ladders/crash.ko.yaml", "  - name: 잡이 스텝별로 어떻게 끝났는가\n",
     "  - name: 잡이 스텝별로 어떻게 끝났는가\n    command: sacct -j 1\n",
     "runbooks/ladders/crash.ko.yaml:17:5: [unknown-field] warning: unknown field 'command'; "
     "expected a field of the ladder-overlay schema"),
    ("ladders/crash.ko.yaml", "lang: ko\n", "lang: ja\n",
     "runbooks/ladders/crash.ko.yaml:4:5: [id-mismatch] id 'crash' and lang 'ja' do not match the file name "
     "'crash.ko'; expected the file named <id>.<lang>.yaml"),
    ("stack.ko.yaml", "  - layer: driver\n", "  - layer: data\n",
     "runbooks/stack.ko.yaml:11:1: [overlay-missing] warning: layer 'driver' is not translated; "
     "expected the translation of stack.yaml:52:5\n"
     "runbooks/stack.ko.yaml:52:12: [overlay-unknown] warning: layer 'data' is not in stack.yaml; expected one of "
     "its layers: model-code, framework, cuda-libraries, nccl, driver, gpu-hardware, host, network-fabric, "
     "storage, scheduler, human-ops"),
    ("stack.ko.yaml", "  - layer: driver\n", "  - layer: nccl\n",
     "runbooks/stack.ko.yaml:11:1: [overlay-missing] warning: layer 'driver' is not translated; "
     "expected the translation of stack.yaml:52:5\n"
     "runbooks/stack.ko.yaml:52:12: [overlay-unknown] warning: layer 'nccl' is translated twice (first at line 42); "
     "expected each layer once"),
    ("stack.ko.yaml", '"NCCL WARN NET/IB"]', '"NCCL WARN NET/IB", "더 있는 신호"]',
     "runbooks/stack.ko.yaml:87:75: [overlay-unknown] warning: signal 4 of failure mode 1 of layer "
     "'network-fabric' is not in stack.yaml (it has 3 signals); expected only the signals of the English text"),
    ("stack.ko.yaml", "        cheapest_check: ulimit -a\n", "",
     "runbooks/stack.ko.yaml:79:9: [overlay-missing] warning: failure mode 2 of layer 'host' has no "
     "'cheapest_check'; expected the translation of stack.yaml:81:25"),
    ("stack.ko.yaml", "kind: stack-overlay\n", "kind: stack-overlay\nsummery: 오타\n",
     "runbooks/stack.ko.yaml:5:1: [unknown-field] warning: unknown field 'summery', did you mean 'summary'?"),
])
def test_each_disagreement_with_the_english_record_gets_its_located_line(
        tmp_path: Path, path: str, old: str, new: str, line: str) -> None:
    root = _repo(tmp_path)
    _edit(root / "runbooks" / path, old, new)
    result = tooling("validate", cwd=root)
    assert result.stdout == line.rstrip("\n") + "\n"
    assert result.returncode == (1 if "[id-mismatch]" in line else 0)


def test_the_merge_keeps_the_record_and_its_path_and_passes_what_it_cannot_translate() -> None:
    hang = _record(RUNBOOKS / "ladders" / "hang.yaml")
    shown = apply_overlay(hang, _record(RUNBOOKS / "ladders" / "hang.ko.yaml"))
    assert shown.data["title"] == "학습이 hang 걸렸다 - 프로세스는 살아 있는데 스텝이 진행되지 않는다"
    assert (shown.path, shown.kind, shown.id) == (hang.path, "ladder", "hang")
    assert shown.data["steps"][6]["command"] == "py-spy dump --pid {pid}"
    stack = apply_overlay(_record(RUNBOOKS / "stack.yaml"), _record(RUNBOOKS / "stack.ko.yaml"))
    assert stack.data["layers"][5]["failure_modes"][0]["mode"] == "HBM ECC 에러, row remapping"
    assert stack.data["layers"][5]["failure_modes"][1]["signals"] == ["Xid 79", "GPU has fallen off the bus"]
    assert apply_overlay(hang, None) is hang
    run = _record(RUNBOOKS / "runs" / "demo-7b.yaml")
    assert apply_overlay(run, _record(RUNBOOKS / "stack.ko.yaml")) is run  # a run page has no overlay
    assert hang.data["title"] == "Training hangs - no step progress while processes stay alive"  # not changed


def _flat(text: str) -> str:
    return " ".join(text.split()).lower()


def test_the_korean_seed_fact_phrases_of_the_runbooks_are_in_the_overlays() -> None:
    site = PROJECT / "tests" / "site"
    facts = {f["fact"]: f["phrases"] for f in yaml.safe_load((site / "seed_facts.yaml").read_text())}
    ours = yaml.safe_load((site / "seed_facts_ko" / "runbooks.yaml").read_text(encoding="utf-8"))
    korean_text = _flat(" ".join(t for p in ENGLISH for t in texts(SHAPES[_record(p).kind], _record(_overlay(p)).data)))
    english_text = _flat(" ".join(t for p in ENGLISH for t in texts(SHAPES[_record(p).kind], _record(p).data)))
    assert [fact for fact in ours if fact not in facts] == []
    assert [(fact, p) for fact, phrases in ours.items() for p in phrases if _flat(p) not in korean_text] == []
    shown = [fact for fact, phrases in facts.items() if any(_flat(p) in english_text for p in phrases)]
    assert [fact for fact in shown if fact not in ours] == []


def test_text_the_english_record_does_not_have_is_reported_where_the_overlay_has_it(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    english = root / "runbooks" / "ladders" / "crash.yaml"
    text = english.read_text(encoding="utf-8")
    english.write_text(text[:text.index("summary:")] + text[text.index("steps:"):], encoding="utf-8")
    result = tooling("validate", cwd=root)
    assert (result.returncode, result.stdout) == (0, (
        "runbooks/ladders/crash.ko.yaml:7:1: [overlay-unknown] warning: the overlay has 'summary' but the English "
        "text (crash.yaml) has none; expected only text that translates English text\n"))
    merged = apply_overlay(_record(english), _record(root / "runbooks" / "ladders" / "crash.ko.yaml"))
    assert "summary" not in merged.data  # a translation of nothing is not shown
