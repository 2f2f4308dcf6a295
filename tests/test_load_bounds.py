"""What a record's YAML may cost, counted as it will be paid: aliases in bytes of text as well as
in nodes, numbers by their digits before conversion; and keys that are not text, named as what
they are. Each through the real executable, with the full error text."""
from __future__ import annotations

import time
from pathlib import Path

from hypothesis import given, strategies as st

from support import snapshot, tooling
from tooling.records.load import parse_text
from tooling.records.yaml_loader import MAX_EXPANDED_BYTES

INCIDENT = (Path(__file__).parent / "corpus" / "incidents" / "INC-0002.yaml").read_text()


def _incident(number: int, extra: str) -> str:
    return INCIDENT.replace("INC-0002", f"INC-{number:04d}") + extra


def test_aliases_of_one_long_string_are_refused_by_their_bytes_before_anything_is_built(repo: Path) -> None:
    # defect 2 of issue 21: 215 KB on disk, 800 MB once expanded; validate passed it
    text = _incident(9, "notes: &a " + "x" * 200_000 + "\nrelated:\n" + "  - *a\n" * 4_000)
    (repo / "incidents" / "INC-0009.yaml").write_text(text)
    started = time.monotonic()
    result = tooling("validate", cwd=repo)
    assert time.monotonic() - started < 20
    assert (result.returncode, result.stdout) == (
        1, "incidents/INC-0009.yaml:14:3: [alias-bomb] aliases expand to more than 1,048,576 bytes of text; "
           "expected a record whose values, written out, fit in a record file (1 MiB)\n")
    exported = tooling("export", "--jsonl", cwd=repo)
    assert exported.returncode != 0 and len(exported.stdout) < 100_000, exported.stderr[-300:]


@given(length=st.integers(1, 300_000), count=st.integers(1, 400))
def test_aliases_are_refused_exactly_when_written_out_they_exceed_the_bound(length: int, count: int) -> None:
    text = f"kind: incident\nnotes: &a {'y' * length}\nrelated:\n" + "  - *a\n" * count
    loaded = parse_text("INC-0001.yaml", text)
    written_out = len("incident") + length * (1 + count) + len("kindnotesrelated")
    assert bool(loaded.findings) == (written_out > MAX_EXPANDED_BYTES)
    if loaded.findings:
        assert [(f.rule, f.line) for f in loaded.findings] in ([("alias-bomb", 4)], [("alias-bomb", 1)])


def test_a_null_key_is_named_as_null_where_it_is(repo: Path) -> None:
    # issue 21, 13: a `~:` key was a warning about a field 'None' at 1:1
    (repo / "incidents" / "INC-0009.yaml").write_text(_incident(9, "~: 1\n"))
    result = tooling("validate", "incidents/INC-0009.yaml", cwd=repo)
    assert (result.returncode, result.stdout) == (
        1, "incidents/INC-0009.yaml:12:1: [invalid-key] key '~' is null, not text; expected a text key "
           "(written in quotes if '~' is meant)\n")


def test_keys_that_are_not_text_are_refused_with_what_they_are(repo: Path) -> None:
    cases = {
        "impact:\n  1: x\n": "13:3: [invalid-key] key '1' is a number, not text; expected a text key "
                            "(written in quotes if '1' is meant)",
        "yes: x\n": "12:1: [invalid-key] key 'yes' is true or false, not text; expected a text key "
                    "(written in quotes if 'yes' is meant)",
        "[a, b]: x\n": "12:1: [invalid-key] key is a list, not text; expected a text key",
        "? {a: 1}\n: x\n": "12:3: [invalid-key] key is a mapping, not text; expected a text key",
        "base: &b {0.5: x}\nimpact:\n  <<: *b\n": "12:11: [invalid-key] key '0.5' is a number, not text; "
                                                  "expected a text key (written in quotes if '0.5' is meant)",
    }
    for number, extra in enumerate(cases, start=10):
        (repo / "incidents" / f"INC-{number:04d}.yaml").write_text(_incident(number, extra))
    result = tooling("validate", *[f"incidents/INC-{n:04d}.yaml" for n in range(10, 10 + len(cases))], cwd=repo)
    assert result.returncode == 1
    assert result.stdout == "".join(f"incidents/INC-{n:04d}.yaml:{line}\n"
                                    for n, line in enumerate(cases.values(), start=10))


def test_a_quoted_key_is_text(repo: Path) -> None:
    (repo / "incidents" / "INC-0009.yaml").write_text(_incident(9, "'~': 1\n"))
    result = tooling("validate", "incidents/INC-0009.yaml", cwd=repo)
    assert (result.returncode, result.stdout) == (
        0, "incidents/INC-0009.yaml:12:1: [unknown-field] warning: unknown field '~'; "
           "expected a field of the incident schema\n")


def test_a_whole_number_of_5000_digits_is_refused_by_its_digits(repo: Path) -> None:
    (repo / "incidents" / "INC-0009.yaml").write_text(_incident(9, "impact:\n  gpu_hours_lost: " + "9" * 5_000 + "\n"))
    result = tooling("validate", "incidents/INC-0009.yaml", cwd=repo)
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "incidents/INC-0009.yaml:13:19: [invalid-number] integer '999999999999999999999999…' is too large; "
           "expected a whole number of at most 9,223,372,036,854,775,807\n", "1 file checked: 1 error, 0 warnings\n")


def test_set_refuses_a_whole_number_of_5000_digits_in_the_records_words(repo: Path) -> None:
    before = snapshot(repo)
    for value, at in (("9" * 5_000, 1), ("[1, 0x" + "f" * 5_000 + "]", 5)):
        result = tooling("set", "INC-0002", f"impact.gpu_hours_lost={value}", cwd=repo)
        digits = value.lstrip("[1, ")[:24]
        assert (result.returncode, result.stderr) == (
            2, f"tooling: error: 'impact.gpu_hours_lost': integer '{digits}…' is too large at character {at}; "
               "expected a whole number of at most 9,223,372,036,854,775,807\n")
    assert snapshot(repo) == before
