"""The tables of tests/conftest.py name tests that exist: a test renamed or removed would leave
its entry marking nothing, and a slow test would fall back into the fast tier unseen."""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path
from types import ModuleType

import pytest

TESTS = Path(__file__).resolve().parent


def _conftest(config: pytest.Config) -> ModuleType:
    """tests/conftest.py as pytest loaded it (the name `conftest` is tests/site's too)."""
    return next(plugin for plugin in config.pluginmanager.get_plugins()
                if getattr(plugin, "__file__", None) == str(TESTS / "conftest.py"))


@lru_cache(maxsize=None)
def _tests_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


@pytest.mark.parametrize("table", ["SLOW", "EXECUTABLE", "GROUPS"])
def test_every_entry_names_a_test_file_or_a_test_of_it(table: str, pytestconfig: pytest.Config) -> None:
    missing = []
    for node, why in getattr(_conftest(pytestconfig), table).items():
        file, _, name = node.partition("::")
        path = TESTS / file
        if node.endswith("/"):  # a folder of tests (GROUPS)
            if not any(path.glob("test_*.py")):
                missing.append(node)
        elif not path.is_file() or (name and name.split("[", 1)[0] not in _tests_of(path)):
            missing.append(node)
        assert why.strip(), f"{node}: say why"
    assert missing == []


def test_every_test_file_has_a_name_of_its_own() -> None:
    # pytest imports test files by their base name (no packages here): a second file of one name
    # in another folder stops the whole collection ("import file mismatch"), so CI runs nothing
    names: dict[str, list[str]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        if "bench" not in path.relative_to(TESTS).parts and "corpus" not in path.relative_to(TESTS).parts:
            names.setdefault(path.name, []).append(path.relative_to(TESTS).as_posix())
    assert {name: paths for name, paths in names.items() if len(paths) > 1} == {}
