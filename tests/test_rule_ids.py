"""The table of rule ids (tooling/rules/rule_table.py) against the code that writes them and the docs
that explain them (docs/records.md, both editions): every id a finding of tooling/ can carry is in
the table with the severity the code gives it, every id of the table is written somewhere, and
each is explained in the docs, a warning or a note said so, and nothing more."""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import pytest

from support import PROJECT
from tooling.records.findings import Severity
from tooling.rules.rule_table import RULES

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE
# the calls that make a finding: the severity each gives when the call names none (a Finding and
# finding_at: an error; tooling review's findings are errors, an overlay's warnings), and whether
# the call can name one (after the rule and the message)
MAKERS = {"Finding": (E, True), "finding_at": (E, False), "ReviewFinding": (E, False), "finding": (W, False)}
DOCS = {"docs/records.md": r"\(warning\b", "docs/records.ko.md": "경고"}


@lru_cache(maxsize=1)
def written() -> tuple[tuple[str, str, Severity | None], ...]:
    """(where, rule id, severity) of every rule id tooling/ writes; severity None: decided at run time."""
    return tuple(found for path in sorted((PROJECT / "tooling").rglob("*.py"))
                 for found in _written(path, ast.parse(path.read_text("utf-8"))))


def _written(path: Path, tree: ast.AST) -> Iterator[tuple[str, str, Severity | None]]:
    where = lambda node: f"{path.relative_to(PROJECT)}:{node.lineno}"  # noqa: E731
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (name := _name(node.func)) in MAKERS:
            at = next((i for i, a in enumerate(node.args) if isinstance(a, ast.Constant) and isinstance(a.value, str)),
                      None)
            if at is not None:  # the rule, its message, then the severity if any
                default, named = MAKERS[name]
                yield where(node), node.args[at].value, _severity(node, node.args[at + 2:], default) if named else default
        # {check: rule} tables: the schema's validators, the loader's guards, and a .get's fallback
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and any(
                isinstance(t, ast.Name) and t.id.endswith("_RULES") for t in node.targets):
            yield from ((where(v), v.value, E) for v in node.value.values if isinstance(v, ast.Constant))
        if isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Dict) and isinstance(node.target, ast.Name) \
                and node.target.id.endswith("_RULES"):
            yield from ((where(v), v.value, E) for v in node.value.values if isinstance(v, ast.Constant))
        if isinstance(node, ast.Call) and _name(node.func) == "get" and isinstance(node.func, ast.Attribute) \
                and _name(node.func.value).endswith("_RULES") and len(node.args) == 2 \
                and isinstance(node.args[1], ast.Constant):
            yield where(node), node.args[1].value, E


def _name(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _severity(call: ast.Call, after: list[ast.expr], default: Severity) -> Severity | None:
    given = [*after, *(k.value for k in call.keywords if k.arg == "severity")]
    if not given:
        return default
    value = given[-1]
    if isinstance(value, ast.Attribute) and _name(value.value) == "Severity":
        return Severity[value.attr]
    return None  # as another finding's (too-many-findings)


def documented(path: str) -> dict[str, str]:
    """Rule id -> its row, from the docs' tables whose first column is rule ids; ids the prose names
    (`review-blame`, `[mapping]`) with the paragraph that names them."""
    text = (PROJECT / path).read_text("utf-8")
    rows = {rule: line for line in text.splitlines()
            if (cell := re.match(r"\| ((?:`[a-z0-9-]+`(?:, )?)+) \|", line))
            for rule in re.findall(r"`([a-z0-9-]+)`", cell[1])}
    prose = {rule: paragraph for paragraph in text.split("\n\n") for rule in RULES
             if rule not in rows and re.search(rf"`{rule}`|`[^`]*\[{rule}\][^`]*`", paragraph)}
    return {**prose, **rows}


def test_every_rule_id_written_is_in_the_table_with_its_severity() -> None:
    assert [f"{where}: {rule}" for where, rule, _ in written() if rule not in RULES] == []
    assert [f"{where}: {rule} is a {severity.value}, the table says {RULES[rule].severity.value}"
            for where, rule, severity in written() if severity is not None and severity != RULES[rule].severity] == []


def test_every_rule_id_of_the_table_is_written() -> None:
    assert sorted(set(RULES) - {rule for _, rule, _ in written()}) == []


@pytest.mark.parametrize("path", sorted(DOCS))
def test_every_rule_id_is_explained_in_the_docs_and_nothing_else(path: str) -> None:
    docs = documented(path)
    assert sorted(set(RULES) - set(docs)) == []
    table_rows = {rule for line in (PROJECT / path).read_text("utf-8").splitlines()
                  if (cell := re.match(r"\| ((?:`[a-z0-9-]+`(?:, )?)+) \|", line))
                  for rule in re.findall(r"`([a-z0-9-]+)`", cell[1])}
    # a table of ids that are not rules (record kinds, fields) would not start its rows this way
    assert sorted(rule for rule in table_rows if rule not in RULES and "-" in rule and not rule.startswith("INC")) == []


@pytest.mark.parametrize("path", sorted(DOCS))
def test_the_docs_say_which_rules_are_warnings_and_notes(path: str) -> None:
    docs = documented(path)
    said = {rule: W if re.search(DOCS[path], row) else N if "(note)" in row else E for rule, row in docs.items()
            if rule in RULES}
    assert {rule: s.value for rule, s in said.items() if s != RULES[rule].severity} == {}
