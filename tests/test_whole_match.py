"""Ids and shapes are matched whole: a trailing line break is never part of an id.

Python's ``$`` also matches before a final line break, and the Python validators apply a JSON
Schema ``pattern`` with ``re.search`` (ECMA-262's ``$`` has no such exception). So every shipped
pattern ends in ``$(?!\\n)``, which means the end of the text in both, and every whole-value
regular expression in tooling/ ends in ``\\Z``."""
from __future__ import annotations

import ast
import json
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

import fastjsonschema
import jsonschema
from hypothesis import given, strategies as st
from hypothesis_jsonschema import from_schema

from support import PROJECT, snapshot, tooling
from tooling.records.kinds import KINDS
from tooling.records.layout import is_id
from tooling.records.schema import field_spec


def _patterns(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            yield node["pattern"]
        for value in node.values():
            yield from _patterns(value)
    elif isinstance(node, list):
        for value in node:
            yield from _patterns(value)


SCHEMAS = sorted(p.name for p in resources.files("tooling.schemas").iterdir() if p.name.endswith(".json"))
PATTERNS = sorted({p for name in SCHEMAS
                   for p in _patterns(json.loads(resources.files("tooling.schemas").joinpath(name).read_text()))})


def test_every_shipped_schema_pattern_is_walked() -> None:
    assert len(SCHEMAS) >= 9 and len(PATTERNS) >= 15  # the walk finds them: nested, in $defs, in propertyNames


@lru_cache(maxsize=None)
def _validators(pattern: str) -> tuple[Any, Any]:
    schema = {"type": "string", "pattern": pattern}
    return jsonschema.Draft202012Validator(schema), fastjsonschema.compile(schema)


def _fast_accepts(validate: Any, value: str) -> bool:
    try:
        validate(value)
        return True
    except fastjsonschema.JsonSchemaException:
        return False


@given(st.sampled_from(PATTERNS).flatmap(lambda p: st.tuples(st.just(p), from_schema(
    {"type": "string", "pattern": p, "maxLength": 60}))))
def test_both_validators_refuse_a_trailing_line_break_after_any_value_a_pattern_accepts(case: tuple[str, str]) -> None:
    pattern, value = case
    full, fast = _validators(pattern)
    assert full.is_valid(value) and _fast_accepts(fast, value)
    for tail in ("\n", "\r\n", " \n"):
        assert not full.is_valid(value + tail), (pattern, value + tail)
        assert not _fast_accepts(fast, value + tail), (pattern, value + tail)


@given(st.sampled_from(sorted(KINDS)).flatmap(lambda kind: st.tuples(st.just(kind), from_schema(
    {"maxLength": 40, **field_spec(kind, "id")}))))
def test_an_id_of_any_kind_with_a_trailing_line_break_is_no_id(case: tuple[str, str]) -> None:
    kind, record_id = case
    assert is_id(kind, record_id)
    assert not is_id(kind, record_id + "\n")


def _regex_literals() -> Iterator[tuple[str, int, str, int]]:
    """(file, line, pattern, flags) of every regular expression written as a literal in tooling/."""
    for path in sorted((PROJECT / "tooling").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                    and node.func.attr in ("compile", "match", "fullmatch", "search") and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                continue
            flags = [a for a in [*node.args[1:], *(k.value for k in node.keywords)]]
            names = {n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", "") for f in flags
                     for n in ast.walk(f)}
            multiline = bool(names & {"M", "MULTILINE"})
            yield str(path.relative_to(PROJECT)), node.lineno, node.args[0].value, multiline


def test_no_whole_value_regex_in_tooling_ends_in_a_bare_dollar() -> None:
    literals = list(_regex_literals())
    assert len(literals) > 50  # the walk finds them
    offenders = [f"{path}:{line}: {pattern!r}" for path, line, pattern, multiline in literals
                 if pattern.startswith("^") and re.search(r"(?<!\\)\$\Z", pattern) and not multiline
                 and not pattern.endswith(r"\s*$")]  # trailing whitespace, a line break too, is meant there
    assert offenders == [], "write \\Z: $ also matches before a final line break"


def test_new_run_refuses_a_name_with_a_trailing_line_break(repo: Path) -> None:
    # defect 6 of issue 21: it made runbooks/runs/foo\n.yaml, validate accepted it, build failed
    before = snapshot(repo)
    result = tooling("new-run", "foo\n", cwd=repo)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "tooling: error: NAME: expected lower-case letters, digits and dashes, such as demo-7b "
               "but received: 'foo\\n'\n")
    assert snapshot(repo) == before


def test_validate_refuses_an_id_with_a_trailing_line_break_and_names_the_file_on_one_line(repo: Path) -> None:
    runs = repo / "runbooks" / "runs"
    (runs / "foo\n.yaml").write_text((runs / "demo-7b.yaml").read_text().replace("id: demo-7b", 'id: "foo\\n"'))
    result = tooling("validate", cwd=repo)
    assert (result.returncode, result.stdout) == (
        1, "runbooks/runs/foo\\n.yaml:2:5: [invalid-format] expected lower-case letters, digits and dashes, "
           "such as demo-7b but received: 'foo\\n'\n")


def test_an_id_with_a_trailing_line_break_names_no_record(repo: Path) -> None:
    before = snapshot(repo)
    result = tooling("set", "INC-0001\n", "title=a new title for it", cwd=repo)
    assert (result.returncode, result.stderr) == (
        2, "tooling: error: expected a record id such as INC-0042, PM-0007, demo-7b, hang, stack "
           "but received: 'INC-0001\\n'\n")
    assert snapshot(repo) == before


def test_a_file_named_with_a_line_break_does_not_take_an_incident_number(repo: Path) -> None:
    (repo / "incidents" / "INC-0041.yaml\n").write_text("not a record\n")
    result = tooling("new-incident", "--title", "Loss went NaN at step 1200", "--run", "demo-7b",
                     "--severity", "sev3", "--symptom", "nan", "--layer", "training-dynamics", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("created incidents/INC-0003.yaml\n")
