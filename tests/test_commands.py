"""A command is one file: each module of tooling/commands/ named in COMMANDS declares its name, its
help, its arguments and its run; the dispatcher lists them, nothing else does."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from support import PROJECT, tooling
from tooling.commands import COMMANDS, modules

COMMAND_DIR = PROJECT / "tooling" / "commands"


def test_every_command_module_declares_its_parser_beside_its_run() -> None:
    for module in modules():
        assert isinstance(module.NAME, str) and isinstance(module.HELP, str), module.__name__
        assert callable(module.add_arguments) and callable(module.run), module.__name__


def test_the_modules_with_a_run_are_the_commands() -> None:
    """A command module left out of COMMANDS would be a command nobody can run."""
    with_run = {path.stem for path in COMMAND_DIR.glob("*.py") if re.search(r"^def run\(", path.read_text(), re.M)}
    assert sorted(with_run) == sorted(COMMANDS)


def test_help_lists_exactly_the_modules_commands_in_their_order(tmp_path: Path) -> None:
    result = tooling("--help", cwd=tmp_path, env={"COLUMNS": "400"})
    assert result.returncode == 0
    listing = result.stdout.split("  COMMAND\n", 1)[1].split("\n\n", 1)[0]
    # a command line is indented 4 spaces; a name too long for the column puts its help on the next line
    listed = [(name, " ".join(text.split())) for name, text in re.findall(r"^    (\S+)((?:.|\n {5,})*)", listing, re.M)]
    assert listed == [(module.NAME, module.HELP) for module in modules()]


def test_building_the_parser_loads_none_of_the_work() -> None:
    """Every command's parser is built at each start: the modules behind a command load only
    when it runs (a start stays about 0.1 s; all of them took 0.6 s more)."""
    script = ("import sys; from tooling.main import _parser; _parser(); "
              "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
              "('tooling', 'rich', 'jsonschema', 'mkdocs', 'ruamel', 'jinja2'))))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    loaded = done.stdout.split()
    light = ("tooling.commands", "tooling.records", "tooling.fs", "tooling.rules.time_rules", "tooling.slurm.signals")
    heavy = [m for m in loaded if m.split(".")[0] != "tooling" or not (
        m.startswith(light) or m in ("tooling", "tooling.main", "tooling.arguments", "tooling.errors",
                                     "tooling.error_handler", "tooling.messages", "tooling.rules", "tooling.slurm"))]
    assert heavy == []
    assert "tooling.records.load" not in loaded  # the store's modules that parse and check records
