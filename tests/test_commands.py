"""A command is one file: each module of tooling/commands/ named in COMMANDS declares its name, its
help, its arguments and its run; the dispatcher lists them, nothing else does, and names the bad
value of a field by the option it came from, read from the command's parser."""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from support import PROJECT, snapshot, tooling
from tooling.commands import COMMANDS, command_parser, modules, option_names
from tooling.now import Clock
from tooling.records.schema import field_spec
from tooling.writers.scaffold import INCIDENT_FIELDS

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
                                     "tooling.distribution", "tooling.error_handler", "tooling.messages", "tooling.now",
                                     "tooling.rules", "tooling.slurm"))]
    assert heavy == []
    assert "tooling.records.load" not in loaded  # the store's modules that parse and check records


def _command_parser(command: str) -> argparse.ArgumentParser:
    from tooling.main import _parser

    return command_parser(_parser(), command)


# the fields each command's record takes from its options (tooling/writers/scaffold.py checks them
# by field): the dispatcher's map, read from the parser, must name each by an option of that command
SET_BY_OPTIONS = {
    "new-incident": INCIDENT_FIELDS,
    "new-postmortem": ("incidents", "title", "authors"),
    "new-run": ("id", "title", "owner"),
    "scan": ("run", "cluster"), "watch": ("run", "cluster"),
    "stacks": ("run",), "triage": ("run",), "watchdog": ("run",),
}


@pytest.mark.parametrize("command", SET_BY_OPTIONS)
def test_the_field_map_names_every_field_a_command_sets_by_one_of_its_own_options(command: str) -> None:
    parser = _command_parser(command)
    own = {o for a in parser._actions for o in a.option_strings} | {a.metavar for a in parser._actions}
    names = option_names(parser)
    assert {field: names.get(field) in own for field in SET_BY_OPTIONS[command]} == \
        dict.fromkeys(SET_BY_OPTIONS[command], True)


def _enum(field: str) -> list[str]:
    return field_spec("incident", field)["enum"]


NEW = ["new-incident", "--title", "Loss spiked at step 900", "--run", "demo-7b", "--severity", "sev3", "--symptom", "hang"]
# field -> (the options after NEW's, with a bad value for it), the error
BAD = {
    "title": (["--title", "abc"], "--title: expected at least 5 characters but received: 'abc'"),
    "run": (["--run", "nope"], "--run: Expected one of: ['demo-7b'] but received: 'nope'"),
    "severity": (["--severity", "sev9"], f"--severity: Expected one of: {_enum('severity')} but received: 'sev9'"),
    "symptom": (["--symptom", "bogus"], f"--symptom: Expected one of: {_enum('symptom')} but received: 'bogus'"),
    "layer": (["--layer", "bogus"], f"--layer: Expected one of: {_enum('layer')} but received: 'bogus'"),
    "signatures": (["--signature", ""], "--signature: expected at least 1 characters but received: ''"),
    "nodes": (["--node", "a", "--node", "a"], "--node: expected each item once but received 'a' more than once"),
    "ranks": (["--rank", "1", "--rank", "1"], "--rank: expected each item once but received 1 more than once"),
    "detected_at": (["--detected-at", "yesterday"], "--detected-at: expected a timestamp with a timezone offset "
                    "(2026-03-14T02:47:00+00:00), or as much of a date as is known: 2026-03-14, 2026-03 or 2026 "
                    "but received: 'yesterday'"),
    "reported_by": (["--reported-by", " x"], "--reported-by: expected a name or handle without surrounding spaces "
                    "but received: ' x'"),
}


def test_every_field_new_incident_takes_from_an_option_has_a_bad_value_below() -> None:
    assert sorted(BAD) == sorted(INCIDENT_FIELDS)


@pytest.mark.parametrize("field", BAD)
def test_a_bad_value_of_each_field_is_named_by_its_option_once(repo: Path, field: str) -> None:
    """One translation, in the dispatcher: each field by the option it came from (--signature
    for signatures, --detected-at for detected_at), and nothing written."""
    options, said = BAD[field]
    before = snapshot(repo)
    result = tooling(*NEW, *options, cwd=repo)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"tooling: error: {said}\n")
    assert snapshot(repo) == before


def test_the_clock_is_the_fixed_now_or_the_local_clock_to_the_second_asked_each_time() -> None:
    fixed = datetime(2026, 11, 29, 12, tzinfo=timezone(timedelta(hours=9)))
    assert Clock(fixed)() == fixed
    clock = Clock()
    before = datetime.now().astimezone().replace(microsecond=0)
    first = clock()
    time.sleep(1.01 - time.time() % 1)  # into the next second
    second = clock()
    assert first.microsecond == 0 and first.utcoffset() == before.utcoffset()
    assert before <= first < second


def test_the_local_now_is_computed_in_one_place() -> None:
    """tooling/now.py, for every command (tooling/resilience/ stands apart and keeps its own); the
    error handler's log stamps its entries in UTC, a line of the log, not a command's now."""
    computing = sorted(str(path.relative_to(PROJECT)) for path in (PROJECT / "tooling").rglob("*.py")
                       if "resilience" not in path.parts and "datetime.now(" in path.read_text())
    assert computing == ["tooling/error_handler.py", "tooling/now.py"]
