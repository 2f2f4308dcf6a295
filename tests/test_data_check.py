"""The data-pipeline check (issue 24, item 4): `tooling data-check MANIFEST` before launch names
every file that is missing, unreadable, of the wrong size or content, in one located line each,
and loads one batch through the training's own loader."""
from __future__ import annotations

import hashlib
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from support import snapshot, tooling
from tooling.resilience.data_check import check

LOADER = textwrap.dedent("""
    def make_loader(paths):  # a training's own: a Dataset of 16-byte rows, batched by torch's DataLoader
        import torch
        from torch.utils.data import DataLoader

        rows = [row for p in paths for row in torch.frombuffer(bytearray(p.read_bytes()), dtype=torch.uint8)
                .reshape(-1, 16)]
        return DataLoader([(row, int(row[0])) for row in rows], batch_size=4)

    def broken(paths):
        open(paths[0].with_name("vocab.json"))

    def empty(paths):
        return []
""")


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """A training folder: data/ with three shards of 16-byte rows and their manifest, and loaders.py."""
    data = tmp_path / "data"
    data.mkdir()
    for n in range(3):
        (data / f"shard-{n}.bin").write_bytes(bytes(range(n, n + 64)))
    (tmp_path / "loaders.py").write_text(LOADER)
    written = tooling("data-check", "--write", "data/manifest.json", "data", cwd=tmp_path)
    assert (written.returncode, written.stdout) == (0, "wrote data/manifest.json: 3 files, 192 bytes, each with its "
                                                       "sha256\n"), written.stderr
    sys.modules.pop("loaders", None)  # imported by an earlier test from its own folder
    return tmp_path


@pytest.mark.slow  # ~3 s: the loader imports torch
def test_a_healthy_dataset_passes_and_one_batch_goes_through_the_loader(dataset: Path) -> None:
    manifest = json.loads((dataset / "data" / "manifest.json").read_text())
    assert manifest == {"version": 1, "files": [
        {"path": f"shard-{n}.bin", "bytes": 64, "sha256": hashlib.sha256(bytes(range(n, n + 64))).hexdigest()}
        for n in range(3)]}
    done = tooling("data-check", "data/manifest.json", "--loader", "loaders:make_loader", cwd=dataset)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == ("data/manifest.json: 3 files, 192 bytes, as recorded (3 sha256 compared); one batch: "
                           "list of 2: Tensor[4, 16] uint8, Tensor[4] int64\n")


def test_each_failure_is_one_line_naming_its_file(dataset: Path) -> None:
    data = dataset / "data"
    (data / "shard-0.bin").unlink()
    with open(data / "shard-1.bin", "ab") as handle:
        handle.write(b"more")
    (data / "shard-2.bin").write_bytes(bytes(64))  # the same size, other bytes
    entries = json.loads((data / "manifest.json").read_text())["files"]
    (data / "fifo.bin").unlink(missing_ok=True)
    os.mkfifo(data / "fifo.bin")  # opening it would block: it must be named, not read
    (data / "folder.bin").mkdir()
    entries += [{"path": "fifo.bin", "bytes": 0}, {"path": "folder.bin", "bytes": 0}]
    (data / "manifest.json").write_text(json.dumps({"version": 1, "files": entries}))
    before = snapshot(dataset / "data")
    done = tooling("data-check", "data/manifest.json", "--loader", "loaders:make_loader", cwd=dataset)
    where = "of data/manifest.json"
    assert (done.returncode, done.stdout) == (1, "data/manifest.json: 5 files, 192 bytes: 5 failed\n")
    assert done.stderr.splitlines() == [
        f"tooling: error: data/shard-0.bin:1:1: [data-missing] no such file (files[0] {where}); expected the "
        "dataset's file there",
        f"tooling: error: data/shard-1.bin:1:1: [data-size] 68 bytes, the manifest records 64 (files[1] {where}); "
        "expected the file as recorded (a partial copy? if the dataset changed on purpose, write its manifest again)",
        f"tooling: error: data/shard-2.bin:1:1: [data-checksum] sha256 {hashlib.sha256(bytes(64)).hexdigest()}, the "
        f"manifest records {entries[2]['sha256']} (files[2] {where}); expected the recorded content (a corrupt "
        "copy?)",
        f"tooling: error: data/fifo.bin:1:1: [data-unreadable] cannot be read: not a regular file (files[3] {where}); "
        "expected a readable file",
        f"tooling: error: data/folder.bin:1:1: [data-unreadable] cannot be read: not a regular file (files[4] "
        f"{where}); expected a readable file"]
    assert snapshot(dataset / "data") == before  # a check changes nothing


def test_a_loader_that_fails_or_gives_nothing_is_named(dataset: Path) -> None:
    broken = tooling("data-check", "data/manifest.json", "--loader", "loaders:broken", cwd=dataset)
    assert broken.returncode == 1 and broken.stderr == (
        "tooling: error: data/vocab.json:1:1: [data-loader] --loader loaders:broken failed on its first batch: "
        "FileNotFoundError: [Errno 2] No such file or directory: 'data/vocab.json'; expected one batch from the "
        "manifest's files\n")
    empty = tooling("data-check", "data/manifest.json", "--loader", "loaders:empty", cwd=dataset)
    assert (empty.returncode, empty.stderr) == (1, "tooling: error: data/manifest.json:1:1: [data-loader] --loader "
                                                   "loaders:empty gave no batch from 3 files; expected at least one\n")


@pytest.mark.parametrize(("text", "error"), [
    ('{"version": 1, "files": [\n{"path": "a"',
     "data/bad.json:2:13: [data-manifest] not JSON: Expecting ',' delimiter; expected a dataset manifest "
     "(tooling.resilience.data_check)"),
    ('{"files": []}', 'data/bad.json:1:1: [data-manifest] not a dataset manifest; expected {"version": 1, '
                      '"files": [...]}'),
    ('{"version": 1, "files": [{"path": "a", "bytes": 1, "sha265": "00"}]}',
     'data/bad.json:1:1: [data-manifest] files[0] {"path": "a", "bytes": 1, "sha265": "00"}: expected {"path": ..., '
     '"bytes": N} and an optional "sha256" of 64 hex digits'),
    ('{"version": 1, "files": [{"path": "a", "bytes": 1}, {"path": "a", "bytes": 1}]}',
     'data/bad.json:1:1: [data-manifest] files[1] {"path": "a", "bytes": 1}: named twice'),
], ids=["not-json", "shape", "unknown-key", "twice"])
def test_a_manifest_that_cannot_be_read_is_one_located_line(dataset: Path, text: str, error: str) -> None:
    (dataset / "data" / "bad.json").write_text(text)
    done = tooling("data-check", "data/bad.json", cwd=dataset)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"tooling: error: {error}\n")


def test_usage_errors_change_nothing(dataset: Path) -> None:
    before = snapshot(dataset)
    for args, error in [
        (["data/manifest.json", "--loader", "loaders"], "--loader loaders: expected MODULE:FUNCTION, such as "
                                                        "train:make_loader"),
        (["data/manifest.json", "--loader", "nowhere:f"], "--loader nowhere:f: importing nowhere failed "
                                                          "(ModuleNotFoundError: No module named 'nowhere'); expected "
                                                          f"a module importable from {dataset}"),
        (["--write", "data/new.json"], "--write: expected the files to record after MANIFEST, and no --loader"),
        (["--write", "data/new.json", "data/gone.bin"], "data/gone.bin: no such file; expected files to record and "
                                                        "a folder to write MANIFEST in"),
        (["data/manifest.json", "data/shard-0.bin"], "data/shard-0.bin: files are recorded with --write; expected "
                                                     "MANIFEST alone to check it"),
    ]:
        done = tooling("data-check", *args, cwd=dataset)
        assert (done.returncode, done.stderr) == (2, f"tooling: error: {error}\n"), args
    assert snapshot(dataset) == before


def test_sizes_only_reads_no_content(dataset: Path) -> None:
    (dataset / "data" / "shard-2.bin").write_bytes(bytes(64))  # other bytes, the same size
    done = tooling("data-check", "data/manifest.json", "--sizes-only", "--json", cwd=dataset)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and (report["ok"], report["hashed"], report["files"]) == (True, 0, 3)


KINDS = ("missing", "longer", "shorter", "changed", "folder")


@given(sizes=st.lists(st.integers(1, 300), min_size=1, max_size=6),
       damage=st.dictionaries(st.integers(0, 5), st.sampled_from(KINDS)))
def test_exactly_the_damaged_files_are_named_with_their_rule(tmp_path_factory: pytest.TempPathFactory,
                                                            sizes: list[int], damage: dict[int, str]) -> None:
    folder = tmp_path_factory.mktemp("data")
    paths = [folder / f"part-{n}.bin" for n in range(len(sizes))]
    for n, (path, size) in enumerate(zip(paths, sizes)):
        path.write_bytes(bytes((n * 7 + i) % 251 for i in range(size)))
    files = [{"path": p.name, "bytes": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
             for p in paths]  # as write_manifest writes it (the fixture's), without its fsync per example
    (folder / "manifest.json").write_text(json.dumps({"version": 1, "files": files}))
    expected = []
    for n, kind in sorted(damage.items()):
        if n >= len(paths):
            continue
        path = paths[n]
        if kind == "missing":
            path.unlink()
        elif kind == "longer":
            path.write_bytes(path.read_bytes() + b"x")
        elif kind == "shorter":
            path.write_bytes(path.read_bytes()[:-1])
        elif kind == "changed":
            path.write_bytes(bytes(b ^ 1 for b in path.read_bytes()))
        else:
            path.unlink()
            path.mkdir()
        rule = {"missing": "data-missing", "folder": "data-unreadable", "changed": "data-checksum"}.get(kind,
                                                                                                     "data-size")
        expected.append((str(path), rule))
    report = check(folder / "manifest.json")
    assert [(p.path, p.rule) for p in report.problems] == expected
    assert report.ok == (not expected) and report.files == len(sizes) and report.bytes == sum(sizes)
