"""A team's local failure modes (runbooks/catalogue.yaml, issue 27 item 2): added before the shipped
ones, replacing a shipped mode of the same id where it stands, read by everything that reads the
catalogue (scan here) and checked by validate like the shipped ones, located."""
from __future__ import annotations

from pathlib import Path

import pytest

from support import LUSTRE_MODE, tooling
from tooling.catalogue.checks import merge
from tooling.catalogue.local import repository
from tooling.catalogue.modes import catalogue, shipped_entries

ADDED = LUSTRE_MODE
CHANGED = """\
- id: storage.disk-full
  title: Scratch is full again
  layer: storage
  symptom: checkpoint
  summary: Our scratch volume filled up (ENOSPC).
  errno: [28]
  recognisers: ['No space left on device', 'scratch quota reached']
  automation: storage-capacity-guard
  playbook: playbook/checkpoint-cadence.md#saving-can-fail-too
"""


def _repo(tmp_path: Path, text: str) -> Path:
    (tmp_path / "runbooks").mkdir()
    (tmp_path / "incidents").mkdir()
    (tmp_path / "runbooks" / "catalogue.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def test_added_before_and_changed_in_place(tmp_path: Path) -> None:
    shipped = [m.id for m in catalogue().modes]
    with repository(_repo(tmp_path, ADDED + CHANGED)):
        merged = catalogue()
    assert merged.ids() == ["storage.lustre-ost-full", *shipped]
    assert merged.get("storage.disk-full").title == "Scratch is full again"
    assert catalogue().get("storage.disk-full").title == "No space left on device"  # outside: shipped again


def test_merge_says_where_each_entry_came_from() -> None:
    shipped = [{"id": "a.b"}, {"id": "c.d"}]
    merged, origin = merge(shipped, [{"id": "c.d", "x": 1}, {"id": "e.f"}])
    assert merged == [{"id": "e.f"}, {"id": "a.b"}, {"id": "c.d", "x": 1}]
    assert origin == [1, None, 0]


def test_scan_recognises_a_local_mode_and_a_changed_one(tmp_path: Path) -> None:
    repo = _repo(tmp_path, ADDED + CHANGED)
    (repo / "train.log").write_text("step 10: OST0003 is full\nstep 11: scratch quota reached\n", encoding="utf-8")
    result = tooling("scan", "train.log", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert "storage.lustre-ost-full (layer storage" in result.stdout
    assert "Scratch is full again" in result.stdout
    # the next repository without one: the shipped catalogue, nothing kept from this one
    other = tmp_path / "other"
    (other / "incidents").mkdir(parents=True)
    (other / "train.log").write_text("step 10: OST0003 is full\n", encoding="utf-8")
    assert "lustre-ost-full" not in tooling("scan", "train.log", cwd=other).stdout


@pytest.mark.parametrize("text, where, message", [
    (ADDED.replace("symptom: crash", "symptom: fire"), "4:12", "0/symptom: 'fire' is not one of"),
    (ADDED.replace("storage-capacity-guard", "shrug"), "7:15",
     "storage.lustre-ost-full: automation 'shrug' is not in automations.yaml"),
    (ADDED.replace("'OST[0-9]+ is full'", "'OST[0-9+ is full'"), "6:17", "pattern 'OST[0-9+ is full' does not compile"),
    (ADDED + ADDED, "9:7", "storage.lustre-ost-full: the id is used twice"),
    ("- [unclosed\n", "2:1", "[yaml-syntax]"),
])
def test_validate_locates_a_broken_local_mode(tmp_path: Path, text: str, where: str, message: str) -> None:
    repo = _repo(tmp_path, text)
    result = tooling("validate", cwd=repo)
    assert result.returncode == 1
    assert result.stdout.startswith(f"runbooks/catalogue.yaml:{where}: ["), result.stdout
    assert message in result.stdout and len(result.stdout.splitlines()) == 1


def test_a_broken_local_catalogue_stops_a_reader_in_one_located_line(tmp_path: Path) -> None:
    repo = _repo(tmp_path, ADDED.replace("storage-capacity-guard", "shrug"))
    (repo / "train.log").write_text("OST0003 is full\n", encoding="utf-8")
    result = tooling("scan", "train.log", cwd=repo)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == ("tooling: error: runbooks/catalogue.yaml:7:15: [local-catalogue] "
                             "storage.lustre-ost-full: automation 'shrug' is not in automations.yaml\n")


def test_the_shipped_entries_are_untouched(tmp_path: Path) -> None:
    before = [e["id"] for e in shipped_entries()]
    with repository(_repo(tmp_path, ADDED + CHANGED)):
        catalogue()
    assert [e["id"] for e in shipped_entries()] == before
