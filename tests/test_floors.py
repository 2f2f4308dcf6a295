"""The package's floors (docs: DESIGN.md, "Floors of the package"): imports only run downward.

Each module of tooling/ sits on one floor of FLOORS, found by the longest name that starts it;
an import (at the top, in a function, anywhere but under ``if TYPE_CHECKING``) may reach its own
floor or one below, never one above. No module of the package imports itself back through a
cycle, so no lazy import is left whose only work is to break one. ``tooling/resilience/``,
lifted into training loops alone, stands apart: it imports the standard library, torch and the
small file helpers, nothing else of the package (any floor may import it).
"""
from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import pytest

import without_wiki
from support import PROJECT

PACKAGE = PROJECT / "tooling"

# lowest first; a module's floor is the floor of the longest of these names that starts it
FLOORS: list[tuple[str, tuple[str, ...]]] = [
    ("fs, errors", ("tooling.fs", "tooling.errors", "tooling.messages", "tooling.programs", "tooling.now",
                    "tooling.distribution")),
    # error_handler: the CLI's and the server's one error presenter, quotes with records.findings.excerpt
    ("records (the store)", ("tooling.records", "tooling.schemas", "tooling.error_handler")),
    ("catalogue", ("tooling.catalogue",)),
    ("rules", ("tooling.rules",)),
    ("logs", ("tooling.logs",)),
    ("writers", ("tooling.writers",)),
    ("analyses", ("tooling.analysis",)),
    ("live side", ("tooling.watch", "tooling.slurm", "tooling.diagnose", "tooling.intake", "tooling.health")),
    ("site", ("tooling.site",)),
    ("commands", ("tooling.commands", "tooling.arguments", "tooling.main", "tooling.__main__")),
]
APART = "tooling.resilience"
APART_MAY_IMPORT = ("tooling.resilience", "tooling.fs", "tooling.errors")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PROJECT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@lru_cache(maxsize=1)
def modules() -> dict[str, Path]:
    """Every module of the package, the package itself (an empty __init__) aside."""
    return {name: path for path in sorted(PACKAGE.rglob("*.py")) if (name := module_name(path)) != "tooling"}


def _type_checking(node: ast.If) -> bool:
    return ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _imports(tree: ast.AST, name: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """(line, module) for each import of the package in ``tree``, but those only for type checkers."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking(node):
            yield from (found for child in node.orelse for found in _imports(child, name, is_package))
            continue
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names if alias.name.split(".")[0] == "tooling")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join([*package, *([node.module] if node.module else [])])
            if base.split(".")[0] == "tooling":
                known = modules()
                # `from tooling.logs import blocks` imports the module tooling.logs.blocks
                targets = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known]
                yield from ((node.lineno, target) for target in targets or [base])
        yield from _imports(node, name, is_package)


@lru_cache(maxsize=1)
def graph() -> dict[str, list[tuple[int, str]]]:
    return {name: sorted(set(_imports(ast.parse(path.read_text("utf-8")), name, path.name == "__init__.py")))
            for name, path in modules().items()}


def floor_of(name: str) -> int | None:
    matches = [(len(prefix), level) for level, (_, prefixes) in enumerate(FLOORS) for prefix in prefixes
               if name == prefix or name.startswith(prefix + ".")]
    return max(matches)[1] if matches else None


def test_every_module_has_a_floor() -> None:
    assert [name for name in modules() if not name.startswith(APART) and floor_of(name) is None] == []


def test_imports_run_only_downward() -> None:
    upward = []
    for name, imported in graph().items():
        if name.startswith(APART):
            continue
        for line, target in imported:
            if target.startswith(APART):
                continue
            if (floor_of(target) or 0) > (floor_of(name) or 0):
                upward.append(f"{modules()[name].relative_to(PROJECT)}:{line}: {name} ({FLOORS[floor_of(name) or 0][0]}) "
                              f"imports {target} ({FLOORS[floor_of(target) or 0][0]})")
    assert upward == []


def test_resilience_imports_only_the_file_helpers() -> None:
    outside = [f"{name}:{line}: {target}" for name, imported in graph().items() if name.startswith(APART)
               for line, target in imported if not target.startswith(APART_MAY_IMPORT)]
    assert outside == []


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while (top := stack.pop()) != node:
                component.append(top)
            if component:
                found.append(sorted([node, *component]))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def folder_of(name: str) -> str:
    """tooling.watch.tail -> tooling.watch; a module beside the packages (tooling.main) is its own."""
    path = modules()[name]
    return name if path.parent == PACKAGE and path.name != "__init__.py" else ".".join(name.split(".")[:2])


def test_no_import_cycle_between_modules() -> None:
    edges = {name: {target for _, target in imported if target != name} for name, imported in graph().items()}
    assert cycles(edges) == []


def test_no_import_cycle_between_folders() -> None:
    """records/ importing failures/ importing records/ again was the knot: a folder reaches another
    only if that one never reaches back."""
    edges: dict[str, set[str]] = {}
    for name, imported in graph().items():
        edges.setdefault(folder_of(name), set()).update(
            folder_of(target) for _, target in imported if target in modules() and folder_of(target) != folder_of(name))
    assert cycles(edges) == []


def test_the_resilience_package_loads_nothing_of_the_playbook() -> None:
    """Importing it, each of its modules, and a run reporter's real write (its writer is another
    process, started by name) load no module of the records, the catalogue or the site."""
    script = (
        "import json, sys, tempfile, pathlib, pkgutil, importlib\n"
        "import tooling.resilience\n"
        "first = sorted(m for m in sys.modules if m.startswith('tooling'))\n"
        "for info in pkgutil.iter_modules(tooling.resilience.__path__):\n"
        "    importlib.import_module('tooling.resilience.' + info.name)\n"
        "from tooling.resilience import RunReporter\n"
        "reporter = RunReporter('demo-7b', root=sys.argv[1], every=0.0)\n"
        "reporter.step(1, loss=0.5, tokens=100)\n"
        "written = reporter.flush()\n"
        "reporter.close()\n"
        "print(json.dumps([first, sorted(m for m in sys.modules if m.startswith('tooling')), written]))\n")
    with tempfile.TemporaryDirectory() as folder:
        for name in ("incidents", "runbooks"):
            shutil.copytree(PROJECT / "tests" / "corpus" / name, Path(folder) / name)
        done = subprocess.run([sys.executable, "-c", script, folder], capture_output=True, text=True, timeout=120,
                              cwd=folder)
    assert done.returncode == 0, done.stderr
    first, loaded, written = json.loads(done.stdout)
    assert first == ["tooling", "tooling.resilience"]
    assert [m for m in loaded if not m.startswith(("tooling.resilience", "tooling.fs", "tooling.errors"))
            and m != "tooling"] == []
    assert written  # the write itself happened, in the writer process


@pytest.mark.slow  # ~3 s: a fresh interpreter imports torch
def test_the_resilience_package_imports_nothing_but_the_standard_library_torch_and_the_file_helpers() -> None:
    """In a process that refuses every module of the wiki extra (mkdocs, jinja2, YAML, ruamel,
    Markdown, the schemas' validators: tests/without_wiki.py), the package and each of its modules
    import, and load no module beyond the standard library, torch (and what torch itself loads)
    and tooling.fs; a run reporter that finds no writer there says so once, and training goes on."""
    script = (
        "import json, logging, os, sys, pkgutil, importlib\n"
        "import torch, torch.distributed, torch.distributed.checkpoint\n"
        "with_torch = set(sys.modules)\n"
        "import tooling.resilience\n"
        "for info in pkgutil.iter_modules(tooling.resilience.__path__):\n"
        "    importlib.import_module('tooling.resilience.' + info.name)\n"
        "loaded = sorted(set(sys.modules) - with_torch)\n"
        "logging.basicConfig(stream=sys.stderr, format='%(message)s')\n"
        "reporter = tooling.resilience.RunReporter('demo-7b', root=os.getcwd(), every=0.0)\n"
        "written = []\n"
        "for step in (1, 2, 3):\n"
        "    reporter.step(step, loss=torch.tensor(0.5))\n"
        "    written.append(reporter.flush(timeout=30))\n"
        "reporter.close()\n"
        "print(json.dumps([sorted({m.partition('.')[0] for m in with_torch}), loaded, written]))\n")
    with tempfile.TemporaryDirectory() as folder:
        env = {key: value for key, value in os.environ.items() if key != "TOOLING_EXECUTABLE"}
        done = without_wiki.run(script, cwd=folder, env={**env, "PATH": "/usr/bin:/bin"})  # no `tooling` there
    assert done.returncode == 0, done.stderr
    torch_loads, loaded, written = json.loads(done.stdout)
    outside = [m for m in loaded if m.partition(".")[0] not in {*sys.stdlib_module_names, *torch_loads}
               and not m.startswith(("tooling.resilience", "tooling.fs")) and m != "tooling"]
    assert outside == []
    assert written == [False, False, False]
    [warning] = [line for line in done.stderr.splitlines() if "run reporter" in line]  # once, for three writes
    assert "lacks the package's 'wiki' extra" in warning and "TOOLING_EXECUTABLE=" in warning
