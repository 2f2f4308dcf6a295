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


def test_every_long_unit_is_a_group_or_names_a_test_file_or_a_test_of_it(pytestconfig: pytest.Config) -> None:
    conftest = _conftest(pytestconfig)
    groups = set(conftest.GROUPS.values())
    missing = []
    for node, seconds in conftest.LONG.items():
        file, _, name = node.partition("::")
        path = TESTS / file
        if node not in groups and (not path.is_file() or (name and name.split("[", 1)[0] not in _tests_of(path))):
            missing.append(node)
        assert seconds > 0, f"{node}: its seconds"
    assert missing == []


def test_a_units_expected_seconds_are_its_groups_or_the_sum_of_its_tests(pytestconfig: pytest.Config) -> None:
    conftest = _conftest(pytestconfig)
    expected, long = conftest.expected_seconds, conftest.LONG
    swap, lab5 = "test_benchmarks.py::test_benchmark_runs_at_its_tiny_size[bench_swap]", \
        "labs/test_labs.py::test_lab_self_check_passes[05-atomic-checkpoints]"
    lookup = "site/test_lookup_browser.py::test_every_ladder_lists_its_incidents_and_every_incident_links_its_ladder"
    assert expected(swap, [swap]) == long[swap] > 0  # a test alone is its own unit
    assert expected("lab6-cluster", ["labs/test_labs.py::test_lab6_variant_passes[elastic]"]) == long["lab6-cluster"] > 0
    assert expected("some-group", [swap, lab5]) == long[swap] + long[lab5]
    assert expected(f"{lookup}[ko]", [f"{lookup}[ko]"]) == long[lookup] > 0  # an entry without its parameter
    assert expected("test_tiers.py::test_a", ["test_tiers.py::test_a"]) == 0


def test_every_test_file_has_a_name_of_its_own() -> None:
    # pytest imports test files by their base name (no packages here): a second file of one name
    # in another folder stops the whole collection ("import file mismatch"), so CI runs nothing
    names: dict[str, list[str]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        if "bench" not in path.relative_to(TESTS).parts and "corpus" not in path.relative_to(TESTS).parts:
            names.setdefault(path.name, []).append(path.relative_to(TESTS).as_posix())
    assert {name: paths for name, paths in names.items() if len(paths) > 1} == {}
