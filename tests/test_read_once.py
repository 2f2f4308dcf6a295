"""tooling.records.model.read_once: a property made at its first read, then read from the instance."""
from __future__ import annotations

import pytest

from tooling.records.model import Record, read_once


class Counted:
    made = 0

    @read_once
    def value(self) -> int:
        Counted.made += 1
        return Counted.made * 10


def test_it_is_made_once_per_instance_and_kept_in_its_dict() -> None:
    Counted.made = 0
    one, two = Counted(), Counted()
    assert (one.value, one.value, two.value, one.value) == (10, 10, 20, 10)
    assert Counted.made == 2 and one.__dict__["value"] == 10
    assert isinstance(Counted.__dict__["value"], read_once)


def test_a_frozen_record_reads_its_kind_and_id_once() -> None:
    data = {"kind": "incident", "id": "INC-0001"}
    record = Record("incidents/INC-0001.yaml", data)
    assert (record.kind, record.id) == ("incident", "INC-0001")
    data["id"] = "INC-0002"  # no code changes a loaded record's data: a change is not seen
    assert record.id == "INC-0001"


def test_a_record_without_an_id_fails_only_when_asked_for_it() -> None:
    record = Record("x.yaml", {"kind": "incident"})
    assert record.kind == "incident"
    with pytest.raises(KeyError):
        record.id
