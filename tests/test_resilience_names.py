"""Every name the documentation cites as ``tooling.resilience.X`` imports as cited.

`from tooling.resilience import Watchdog` was an ImportError while the watchdog command, the
diagnose modules and lab 4's README named `tooling.resilience.Watchdog`; the package's own
docstring listed CheckpointManager, KillSwitch, NaNGuard and set_determinism as its names, and
none of them imported either.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from support import PROJECT

CITED = re.compile(r"\btooling\.resilience(?:\.[A-Za-z_]\w*)+")
# what a person reads: the READMEs, the docs, the labs, and the docstrings of the package
SOURCES = ["README*.md", "docs/**/*.md", "labs/**/*.md", "labs/**/*.py", "labs/**/*.sh", "tooling/**/*.py",
           "scripts/**/*"]
PACKAGE = PROJECT / "tooling" / "resilience" / "__init__.py"


def _cited() -> dict[str, str]:
    """Each cited dotted name -> the first file citing it; and the package docstring's own
    :class:/:func: names (relative to the package, as Sphinx reads them)."""
    found: dict[str, str] = {}
    for pattern in SOURCES:
        for path in sorted(PROJECT.glob(pattern)):
            if path.is_file() and "generated" not in path.parts:
                for name in CITED.findall(path.read_text(encoding="utf-8", errors="replace")):
                    found.setdefault(name, str(path.relative_to(PROJECT)))
    doc = ast.get_docstring(ast.parse(PACKAGE.read_text(encoding="utf-8"))) or ""
    for name in re.findall(r":(?:class|func):`(\w+)`", doc):
        found.setdefault(f"tooling.resilience.{name}", "tooling/resilience/__init__.py")
    return found


def _statement(name: str) -> str:
    """``from MODULE import FIRST`` and the attributes after it, for the longest prefix that is a
    module file of the project (found on disk: nothing is imported here)."""
    parts = name.split(".")
    cut = max(i for i in range(2, len(parts) + 1) if (PROJECT.joinpath(*parts[:i]).with_suffix(".py").is_file()
                                                       or (PROJECT.joinpath(*parts[:i]) / "__init__.py").is_file()))
    if cut == len(parts):
        return f"import {name}"
    module, first, rest = ".".join(parts[:cut]), parts[cut], parts[cut + 1:]
    return f"from {module} import {first} as _x; _x{''.join(f'.{r}' for r in rest)}"


# each statement runs as written, in one interpreter (torch is imported once); what fails is printed
RUN = """
for where, name, statement in CITED:
    try:
        exec(statement, {})
    except Exception as exc:
        print(f"{where}: {name}: {type(exc).__name__}: {exc}")
"""


def test_every_cited_resilience_name_imports_as_cited() -> None:
    cited = _cited()
    assert {"tooling.resilience.Watchdog", "tooling.resilience.CheckpointManager"} <= set(cited)
    script = f"CITED = {[(where, name, _statement(name)) for name, where in sorted(cited.items())]!r}\n{RUN}"
    done = subprocess.run([sys.executable, "-c", script], cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == ""


def test_the_package_names_import_without_the_record_code() -> None:
    """A team lifts tooling/resilience and tooling/fs alone: the names (but the run reporter,
    which writes run records) import without tooling.records."""
    code = ("import sys; from tooling.resilience import CheckpointManager, KillSwitch, NaNGuard, Watchdog, "
            "set_determinism, DistributedCheckpointManager; "
            "print(sorted(m for m in sys.modules if m.startswith('tooling.') and "
            "not m.startswith(('tooling.resilience', 'tooling.fs'))))")
    done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr
