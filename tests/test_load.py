"""The loader's guards and the atomic writers, at unit level."""
from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from tooling.fs import atomic
from tooling.fs.atomic import create_file, replace_file
from tooling.records.load import parse_text
from tooling.records.locate import locate
from tooling.records.roundtrip import guess_indent
from tooling.writers.ids import create_next


def test_timestamps_and_dates_stay_text_with_their_offsets() -> None:
    loaded = parse_text("t.yaml", "at: 2026-11-02T03:14:00+09:00\ndue: 2026-12-01\n")
    assert loaded.data == {"at": "2026-11-02T03:14:00+09:00", "due": "2026-12-01"}


def test_merge_keys_may_override_but_own_keys_may_not_repeat() -> None:
    merged = parse_text("t.yaml", "base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  x: 3\n")
    assert merged.data["c"] == {"x": 3, "y": 2} and not merged.findings
    repeated = parse_text("t.yaml", "c:\n  <<: {x: 1}\n  x: 3\n  x: 4\n")
    assert [f.format() for f in repeated.findings] == [
        "t.yaml:4:3: [duplicate-key] duplicate key 'x' (first defined at line 3); expected each key once per mapping"]


def test_a_byte_order_mark_is_accepted() -> None:
    assert parse_text("t.yaml", "\ufeffkind: run\n").data == {"kind": "run"}


def test_small_aliases_are_fine() -> None:
    assert parse_text("t.yaml", "a: &x [1, 2]\nb: *x\n").data == {"a": [1, 2], "b": [1, 2]}


def test_locate_points_at_values_and_keys(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("# c\nkind: incident\ntimeline:\n  - at: x\n    event: y\n")
    assert locate(str(path), ["timeline", 0, "event"]) == (5, 12)
    assert locate(str(path), ["timeline", 0, "event"], at_key=True) == (5, 5)
    assert locate(str(path), ["timeline", 7]) == (4, 3)  # as deep as it exists
    path.write_text("kind: incident\n\n\ntimeline: []\n")  # an edited file is re-read
    assert locate(str(path), ["timeline"]) == (4, 11)


def test_create_file_never_overwrites_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "INC-0001.yaml"
    create_file(target, "first\n")
    with pytest.raises(FileExistsError):
        create_file(target, "second\n")
    assert target.read_text() == "first\n"
    assert os.listdir(tmp_path) == ["INC-0001.yaml"]


def test_replace_file_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "run.yaml"
    target.write_text("old\n")
    target.chmod(0o600)
    replace_file(target, "new\n")
    assert target.read_text() == "new\n" and target.stat().st_mode & 0o777 == 0o600
    assert os.listdir(tmp_path) == ["run.yaml"]


def test_replace_file_never_puts_a_file_in_place_of_a_fifo_a_folder_or_a_loop_of_links(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "folder").mkdir()
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    for name, message in [("pipe", "a device, a pipe or a socket, not a regular file; expected a file to replace"),
                          ("folder", "a folder, not a regular file; expected a file to replace"),
                          ("a", "Too many levels of symbolic links")]:
        with pytest.raises(OSError) as raised:
            replace_file(tmp_path / name, "new\n")
        assert (raised.value.strerror, raised.value.filename) == (message, str(tmp_path / name))
    assert (tmp_path / "pipe").is_fifo() and (tmp_path / "folder").is_dir()
    assert os.readlink(tmp_path / "a") == "b" and sorted(os.listdir(tmp_path)) == ["a", "b", "folder", "pipe"]


def _leave_a_temp_and_die(target: str) -> None:
    atomic._write_temp(Path(target), "half a record")
    os._exit(0)  # as SIGKILL would: no cleanup, the temporary file stays


def test_a_write_removes_what_writers_killed_mid_write_left_and_nothing_of_a_live_one(tmp_path: Path) -> None:
    target = tmp_path / "INC-0001.yaml"
    target.write_text("old\n")
    dead = multiprocessing.get_context("fork").Process(target=_leave_a_temp_and_die, args=(str(target),))
    dead.start()
    dead.join()
    live = tmp_path / f".INC-0001.yaml.{os.getpid()}.x1y2.tmp"  # this process is alive: its file stays
    live.write_text("on its way in\n")
    other = tmp_path / f".INC-0002.yaml.{dead.pid}.x1y2.tmp"  # another record's: not this write's to sweep
    other.write_text("other\n")
    assert len(list(tmp_path.glob(f".INC-0001.yaml.{dead.pid}.*.tmp"))) == 1
    replace_file(target, "new\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name, "INC-0001.yaml"])
    assert target.read_text() == "new\n"


def test_a_write_lists_the_folder_again_only_when_something_moved_its_time(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Looking for leftovers lists the folder (a few ms at 10,000 names): a second replace of the
    same file, with nothing else written into the folder since the first, does not list it; a
    writer that dies meanwhile made its temporary file there, and the next replace sweeps it."""
    target = tmp_path / "INC-0001.yaml"
    target.write_text("old\n")
    listed: list[str] = []
    real = os.listdir
    monkeypatch.setattr(os, "listdir", lambda path=".": listed.append(str(path)) or real(path))
    replace_file(target, "one\n")
    assert listed == [str(tmp_path)]
    replace_file(target, "two\n")
    assert listed == [str(tmp_path)]  # not again
    dead = multiprocessing.get_context("fork").Process(target=_leave_a_temp_and_die, args=(str(target),))
    dead.start()
    dead.join()
    assert len(list(tmp_path.glob(f".INC-0001.yaml.{dead.pid}.*.tmp"))) == 1
    replace_file(target, "three\n")
    assert listed == [str(tmp_path)] * 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["INC-0001.yaml"] and target.read_text() == "three\n"


def test_create_next_takes_the_number_after_the_callers_listing_without_listing(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "INC-0007.yaml").write_text("taken\n")
    listed: list[str] = []
    real = os.listdir
    monkeypatch.setattr(os, "listdir", lambda path=".": listed.append(str(path)) or real(path))
    assert create_next(tmp_path, "INC-", lambda i: f"id: {i}\n", taken=7)[0] == "INC-0008"
    assert listed == []
    # a listing that is behind (another writer took 0009 since): the link fails, the folder is listed
    (tmp_path / "INC-0009.yaml").write_text("taken\n")
    assert create_next(tmp_path, "INC-", lambda i: f"id: {i}\n", taken=8)[0] == "INC-0010"
    assert listed == [str(tmp_path)]
    assert (tmp_path / "INC-0009.yaml").read_text() == "taken\n"


def test_create_next_retries_when_another_writer_takes_the_number_first(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import tooling.writers.ids as allocation

    real = allocation.create_file
    raced: list[str] = []

    def racing(path: Path, text: str) -> None:
        if not raced:  # another writer links the same name between our scan and our link
            raced.append(path.name)
            real(path, "the other writer's record\n")
        real(path, text)

    monkeypatch.setattr(allocation, "create_file", racing)
    record_id, path = create_next(tmp_path, "INC-", lambda i: f"id: {i}\n")
    assert raced == ["INC-0001.yaml"]
    assert (record_id, path.read_text()) == ("INC-0002", "id: INC-0002\n")
    assert (tmp_path / "INC-0001.yaml").read_text() == "the other writer's record\n"


def test_create_next_skips_taken_numbers(tmp_path: Path) -> None:
    (tmp_path / "INC-0007.yaml").write_text("taken\n")
    record_id, path = create_next(tmp_path, "INC-", lambda i: f"id: {i}\n")
    assert (record_id, path.read_text()) == ("INC-0008", "id: INC-0008\n")


@pytest.mark.parametrize("text, expected", [
    ("a:\n  b: 1\nc:\n  - x\n", (2, 4, 2)),
    ("a:\n    b: 1\nc:\n-   x\n", (4, 4, 0)),
    ("a:\n    b: 1\nc:\n    -   x\n", (4, 8, 4)),
    ("a: 1\n", (2, 4, 2)),
])
def test_guess_indent(text: str, expected: tuple[int, int, int]) -> None:
    assert guess_indent(text) == expected
