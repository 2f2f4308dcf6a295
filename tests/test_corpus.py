"""Every broken record gets a located error with a rule id; the full text is asserted."""
from __future__ import annotations

import resource
import sys
from pathlib import Path

import fastjsonschema
import jsonschema
import pytest

from support import CORPUS, PROJECT, tooling
from tooling.main import main
from tooling.records.load import load_file
from tooling.records.schema import _fast, schema_for

BROKEN = sorted(p for p in (CORPUS / "broken").iterdir() if p.is_dir())


def test_corpus_covers_every_failure_class() -> None:
    rules = {line.split("[", 1)[1].split("]", 1)[0]
             for case in BROKEN for line in (case / "expected.txt").read_text().splitlines()}
    assert len(BROKEN) >= 30
    assert rules >= {
        "not-utf8", "tab-character", "yaml-syntax", "duplicate-key", "unsafe-tag", "alias-bomb",
        "file-too-large", "empty-file", "not-a-mapping", "missing-field", "unknown-field",
        "invalid-value", "wrong-type", "invalid-format", "invalid-length", "out-of-range",
        "duplicate-item", "invalid-time", "id-mismatch", "duplicate-id", "unresolved-ref",
        "self-reference", "time-order", "resolved-without-time", "ladder-order"}


@pytest.mark.parametrize("case", BROKEN, ids=[p.name for p in BROKEN])
def test_broken_case_prints_exact_located_error(case: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(case)
    code = main(["--root", str(CORPUS), "validate", "--strict", "."])
    out = capsys.readouterr().out
    assert code == 1
    assert out == (case / "expected.txt").read_text()


def test_whole_corpus_through_the_real_executable_never_tracebacks() -> None:
    result = tooling("--root", str(CORPUS), "validate", "--strict", "broken", cwd=CORPUS)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr + result.stdout
    flagged = {line.split(":", 1)[0].split("/")[1] for line in result.stdout.splitlines()}
    assert flagged == {case.name for case in BROKEN}
    assert result.stderr.startswith(f"{len(BROKEN)} files checked: ")


def test_valid_corpus_passes() -> None:
    result = tooling("validate", "--strict", cwd=CORPUS)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "5 files checked\n")


def test_unknown_field_is_only_a_warning_without_strict() -> None:
    case = CORPUS / "broken" / "unknown-field"
    result = tooling("--root", str(CORPUS), "validate", ".", cwd=case)
    assert result.returncode == 0
    assert result.stdout == ("INC-0100.yaml:10:1: [unknown-field] warning: unknown field "
                             "'owner_team'; expected a field of the incident schema\n")
    assert result.stderr == "1 file checked: 0 errors, 1 warning\n"


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    result = tooling("validate", "nowhere.yaml", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (2, "tooling: error: nowhere.yaml: no such file or directory\n")


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def test_alias_bomb_fails_fast_within_bounded_memory(tmp_path: Path) -> None:
    import subprocess
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 12)]
    (tmp_path / "INC-0001.yaml").write_text("\n".join(levels) + "\n")
    result = subprocess.run([sys.executable, "-m", "tooling", "validate", "INC-0001.yaml"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=20,
                            preexec_fn=_limit_memory)
    assert result.returncode == 1
    assert "[alias-bomb]" in result.stdout and "Traceback" not in result.stderr


def test_fast_path_and_located_path_agree_on_every_corpus_file() -> None:
    for path in sorted(CORPUS.rglob("*.yaml")):
        loaded = load_file(str(path))
        if loaded.findings or not isinstance(loaded.data, dict):
            continue
        kind = loaded.data.get("kind")
        if kind not in ("incident", "postmortem", "run", "ladder"):
            continue
        schema = schema_for(kind)
        full_ok = jsonschema.Draft202012Validator(schema).is_valid(loaded.data)
        try:
            _fast(kind)(loaded.data)
            fast_ok = True
        except fastjsonschema.JsonSchemaException:
            fast_ok = False
        assert fast_ok == full_ok, path


def test_bundled_records_validate_strictly() -> None:
    result = tooling("validate", "--strict", cwd=PROJECT)
    assert result.returncode == 0, result.stdout
    assert result.stdout == ""
