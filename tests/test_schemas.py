"""The shipped schemas: valid draft 2020-12, every field described (they feed the field reference)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import jsonschema
import pytest

from support import PROJECT, tooling
from tooling.records.kinds import KINDS
from tooling.records.model import same_or_later
from tooling.records.schema import schema_for


def _properties(schema: dict[str, Any], where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, spec in schema.get("properties", {}).items():
        yield f"{where}.{name}", spec
        yield from _properties(spec, f"{where}.{name}")
        if isinstance(spec.get("items"), dict):
            yield from _properties(spec["items"], f"{where}.{name}[]")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_schema_is_valid_and_every_field_is_described(kind: str) -> None:
    schema = schema_for(kind)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["kind"]["const"] == kind
    undescribed = [where for where, spec in _properties(schema, kind) if not spec.get("description")]
    assert undescribed == []
    assert all(d.get("description") for d in schema.get("$defs", {}).values())


def _ids(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every string with an id-like pattern (a slug, INC-NNNN, a dotted failure-mode id)."""
    if isinstance(node, dict):
        if node.get("type") == "string" and str(node.get("pattern", "")).startswith(("^[a-z0-9][a-z0-9-]*", "^INC-",
                                                                                     "^PM-")):
            yield where, node
        for key, value in node.items():
            yield from _ids(value, f"{where}.{key}")
    elif isinstance(node, list):
        for number, value in enumerate(node):
            yield from _ids(value, f"{where}[{number}]")


def test_every_id_has_a_longest_length() -> None:
    """An id becomes a file name (runbooks/runs/<id>.yaml): without a limit, 300 characters were
    'file name too long' from the file system instead of a refusal of the value."""
    schemas = sorted((PROJECT / "tooling" / "schemas").glob("*.schema.json"))
    found = [(f"{path.name}{where}", spec)
             for path in schemas for where, spec in _ids(json.loads(path.read_text()), "")]
    assert len(found) >= 12
    assert [where for where, spec in found if not 0 < spec.get("maxLength", 0) <= 100] == []


HISTORY = """\
kind: incident
id: INC-0100
title: Loss spiked around step 12k and came back by itself
scope: cluster
cluster: rsc-1
status: resolved
severity: unknown
symptom: loss-spike
secondary_symptom: slowdown
layer: training-dynamics
failure_mode: training.loss-spike-recovered
keywords: [lm loss spike, recovered without intervention]
detected_at: 2022-06
resolved_at: 2022-06-14
occurrences: 5
impact:
  wall_hours_lost: 3.5
notes: From the team's old logbook; exact times were not kept.
timeline:
  - at: 2022-06
    event: spike seen on the dashboard
  - at: 2022-06-14T10:00:00+00:00
    event: spike gone after a restart
"""


def test_a_record_from_an_old_logbook_validates(tmp_path: Path) -> None:
    (tmp_path / "INC-0100.yaml").write_text(HISTORY)
    result = tooling("validate", "--strict", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "")


@pytest.mark.parametrize("change, message", [
    (("cluster: rsc-1\n", ""), "INC-0100.yaml:1:1: [missing-field] missing required field 'cluster'"),
    (("scope: cluster\ncluster: rsc-1\n", ""), "INC-0100.yaml:1:1: [missing-field] missing required field 'run'"),
    (("resolved_at: 2022-06-14", "resolved_at: 2022-05"),
     "INC-0100.yaml:14:14: [time-order] resolved_at 2022-05 is before detected_at 2022-06; expected it at or after"),
    (("detected_at: 2022-06", "detected_at: 2022-6"),
     "INC-0100.yaml:13:14: [invalid-format] expected a timestamp with a timezone offset (2026-03-14T02:47:00+00:00), "
     "or as much of a date as is known: 2026-03-14, 2026-03 or 2026 but received: '2022-6'"),
    (("occurrences: 5", "occurrences: 0"), "INC-0100.yaml:15:14: [out-of-range] expected a number >= 1 but received: 0"),
])
def test_the_new_fields_keep_their_rules(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    (tmp_path / "INC-0100.yaml").write_text(HISTORY.replace(*change))
    result = tooling("validate", "--strict", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0] == message


@pytest.mark.parametrize("earlier, later, expected", [
    ("2022-06", "2022-06-14T10:00:00+00:00", True), ("2022-06-14", "2022-06", True),
    ("2022-06-14T10:00:00+00:00", "2022-06-14T09:00:00+00:00", False), ("2022", "2021-12-31", False),
    ("2022-06-14T23:30:00-02:00", "2022-06-15T00:30:00+00:00", False),  # 01:30Z is after 00:30Z
])
def test_times_compare_at_the_coarser_precision(earlier: str, later: str, expected: bool) -> None:
    assert same_or_later(earlier, later) is expected
