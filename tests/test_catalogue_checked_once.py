"""The shipped failure-mode catalogue is checked once for its text (and its schema, the
automations and the checks' code): a command that finds the mark of a sound check in the user's
cache skips it, and the import of jsonschema with it (a quarter of a second of `tooling scan`'s
start); a catalogue with a problem leaves no mark and says its problem every time."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tooling.catalogue import checks
from tooling.catalogue.modes import _text
from tooling.records.load import parse_text

SCAN_START = ("import sys; from tooling.catalogue.modes import catalogue; catalogue(); "
              "print('jsonschema' in sys.modules)")


def test_a_sound_catalogue_is_checked_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = _text("failure_modes.yaml")
    entries = parse_text("failure_modes.yaml", source).data
    checked: list[object] = []
    real = checks.check
    monkeypatch.setattr(checks, "check", lambda e: checked.append(e) or real(e))
    assert checks.shipped_problems(entries, source) == [] and len(checked) == 1
    assert checks.shipped_problems(entries, source) == [] and len(checked) == 1  # the mark: not again
    assert len(list((tmp_path / "cache" / "tooling" / "checked-catalogue").iterdir())) == 1
    broken = [dict(entries[0], automation="no-such-automation"), *entries[1:]]
    text = source + "\n# changed\n"
    first = checks.shipped_problems(broken, text)
    assert first and "no-such-automation" in first[0] and len(checked) == 2
    assert checks.shipped_problems(broken, text) == first and len(checked) == 3  # no mark: checked again


def test_a_command_whose_catalogue_was_found_sound_does_not_import_jsonschema(tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    runs = [subprocess.run([sys.executable, "-c", SCAN_START], capture_output=True, text=True, env=env, check=True)
            for _ in range(2)]
    assert [r.stdout.strip() for r in runs] == ["True", "False"]  # checked (jsonschema), then the mark
