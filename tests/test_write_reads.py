"""Issue 22, item 2: a machine write reads the records its rules name, not every record.

A reporter write (``tooling report``, RunReporter's writer process) and a watch poll that files a
failure used to load every record of the repository at each write (10,000 incidents: 18 s a poll);
the run page was parsed four times a write. Now a write reads the few files its rules name (the
incidents a run page lists, the run an incident hit, files named like its own id), a watch reads
again only the incidents that changed since its last poll, and a reporter write parses the page
once, dumps it once and checks the result once. What is refused, and how it is said, is as before.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import sys
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

import pytest
from ruamel.yaml.main import YAML

from support import tooling
from tooling.records.layout import repository_files
from tooling.records.load import load_file
from tooling.records.yaml_loader import RecordLoader
from tooling.watch import state as offsets
from tooling.watch.watcher import StallRule, Watcher
from tooling.writers import feed_server

NOW = "2026-11-29T12:00:00+00:00"
PAGE = Path("runbooks") / "runs" / "demo-7b.yaml"
OLD = 3 * 86400  # seconds: an access time this old is moved by any read (relatime), whatever the mount


def add_incidents(root: Path, count: int) -> None:
    """``count`` more resolved incidents of demo-7b, copies of INC-0001 under their own ids."""
    text = (root / "incidents" / "INC-0001.yaml").read_text()
    for number in range(100, 100 + count):
        (root / "incidents" / f"INC-{number:04d}.yaml").write_text(text.replace("INC-0001", f"INC-{number:04d}"))


def _set_back(paths: list[str]) -> dict[str, float]:
    back = time.time() - OLD
    for path in paths:
        os.utime(path, (back, os.stat(path).st_mtime))
    return {path: os.stat(path).st_atime for path in paths}


@pytest.fixture
def read_times(tmp_path: Path) -> None:
    """Reads are seen by the files' access times: skipped where the file system keeps none."""
    probe = tmp_path / "probe"
    probe.write_text("x")
    before = _set_back([str(probe)])
    probe.read_text()
    if os.stat(probe).st_atime == before[str(probe)]:
        pytest.skip("this file system does not record when a file is read (noatime)")


def files_read(root: Path, action: Any) -> set[str]:
    """The record files of ``root`` that ``action()`` read (relative paths), by their access times."""
    paths = repository_files(root)
    before = _set_back(paths)
    action()
    return {str(Path(p).relative_to(root)) for p in paths if os.stat(p).st_atime != before[p]}


def test_a_reporter_write_reads_the_page_and_the_incidents_it_names_not_every_record(repo: Path,
                                                                                   read_times: None) -> None:
    add_incidents(repo, 300)
    broken = repo / "incidents" / "INC-0500.yaml"
    broken.write_text("kind: incident\nid: [INC-0500\n")  # a broken record the write has nothing to do with
    results = []
    read = files_read(repo, lambda: results.append(tooling("report", "demo-7b", "--step", "1200", "--loss", "2.5",
                                                           "--now", NOW, cwd=repo)))
    assert (results[0].returncode, results[0].stdout, results[0].stderr) == (
        0, "updated runbooks/runs/demo-7b.yaml\n", "")
    # the page, and INC-0002, which its known_issues name (it was all 305 files and the broken one)
    assert read == {str(PAGE), "incidents/INC-0002.yaml"}
    assert load_file(str(repo / PAGE)).data["progress"] == {"step": 1200, "loss": 2.5}
    assert broken.read_text() == "kind: incident\nid: [INC-0500\n"


def test_a_write_is_refused_for_an_incident_it_names_that_does_not_load_as_before(repo: Path) -> None:
    (repo / "incidents" / "INC-0002.yaml").write_text("kind: incident\nid: [INC-0002\n")
    before = (repo / PAGE).read_text()
    result = tooling("report", "demo-7b", "--step", "1200", "--now", NOW, cwd=repo)
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "", "tooling: error: runbooks/runs/demo-7b.yaml:7:15: [unresolved-ref] incident 'INC-0002' is in "
               "incidents/INC-0002.yaml, which cannot be read as a record; expected a incident record without errors "
               "(tooling validate incidents/INC-0002.yaml) (not changed: the edit would make the record invalid)\n")
    assert (repo / PAGE).read_text() == before


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """How often the run page demo-7b was parsed by libyaml (the records' loader) and by ruamel
    (the round-trip editor), and dumped by ruamel: the real functions, counted on the way."""
    counts: Counter[str] = Counter()
    compose, load, dump = RecordLoader.get_single_node, YAML.load, YAML.dump

    def page(text: Any) -> bool:
        return isinstance(text, str) and "\nid: demo-7b\n" in text

    def counted_compose(self: RecordLoader) -> Any:
        counts["libyaml parse"] += page(self._text)
        return compose(self)

    def counted_load(self: YAML, stream: Any) -> Any:
        counts["ruamel parse"] += page(stream)
        return load(self, stream)

    def counted_dump(self: YAML, data: Any, stream: Any = None, **kw: Any) -> Any:
        counts["ruamel dump"] += isinstance(data, dict) and data.get("id") == "demo-7b"
        return dump(self, data, stream, **kw)

    init = RecordLoader.__init__

    def keep_text(self: RecordLoader, stream: Any) -> None:
        self._text = stream
        init(self, stream)

    monkeypatch.setattr(RecordLoader, "__init__", keep_text)
    monkeypatch.setattr(RecordLoader, "get_single_node", counted_compose)
    monkeypatch.setattr(YAML, "load", counted_load)
    monkeypatch.setattr(YAML, "dump", counted_dump)
    yield counts


def test_a_reporter_write_parses_the_page_once_and_dumps_it_once(repo: Path, parses: Counter[str]) -> None:
    """The writer process's loop (feed_server.serve, what `python -m tooling.writers.feed_server`
    runs for RunReporter) writing two steps: the second write, as every write after the first,
    parses the page once to edit it, dumps it once and checks the text it writes once (the text
    it reads is the one it wrote and checked last time). It was four parses a write."""
    def request(step: int) -> str:
        at = (datetime(2026, 11, 29, 12, tzinfo=timezone.utc) + timedelta(minutes=step)).isoformat()
        return json.dumps({"root": str(repo), "start": str(repo), "run": "demo-7b", "now": at,
                           "step": {"step": step, "loss": 2.0, "at": at}, "checkpoint": None}) + "\n"

    replies = io.StringIO()
    feed_server.serve(io.StringIO(request(1)), replies)
    parses.clear()
    feed_server.serve(io.StringIO(request(2)), replies)
    assert replies.getvalue() == '{"ok": true}\n{"ok": true}\n'
    assert dict(parses) == {"ruamel parse": 1, "ruamel dump": 1, "libyaml parse": 1}
    assert load_file(str(repo / PAGE)).data["progress"] == {"step": 2, "loss": 2.0}


@pytest.mark.slow  # ~4.5 s: waits twice for files to be older than the watch's racy interval
def test_a_watch_poll_reads_again_only_the_incidents_that_changed(repo: Path, tmp_path: Path) -> None:
    """A watch (its Watcher, polled as `tooling watch` polls it) reads every incident at its first
    poll that files something; at the next, it reads the incident it adds an occurrence to and the
    run the incident names, not the 300 others (it read all of them at every such poll)."""
    from tooling.watch.known import RACY

    add_incidents(repo, 300)
    time.sleep(RACY)  # a file changed within RACY seconds is read again at each poll: these were just written
    log, state = tmp_path / "train.log", tmp_path / "offsets.json"
    clock = datetime.fromisoformat(NOW)
    filed: list[Any] = []
    watcher = Watcher(root=repo, logs=[log], where={"run": "demo-7b", "extra": {}}, state=offsets.load(state, "demo-7b"),
                      rule=StallRule(repo, "demo-7b", None), clock=lambda: clock, emit=filed.append, once=True)
    opened: list[str] = []
    sys.addaudithook(lambda event, args: opened.append(args[0]) if event == "open" and _recording else None)

    def poll(k: int) -> set[str]:
        global _recording
        with open(log, "a") as handle:
            handle.write(f"[{812345.678934 + 120 * k:.6f}] NVRM: Xid (PCI:0000:ca:00): 79, pid=4242, name=python3, "
                         "GPU has fallen off the bus.\n")
        opened.clear()
        _recording = True
        try:
            watcher.poll(state)
        finally:
            _recording = False
        records = {os.path.abspath(p) for p in repository_files(repo)}
        return {str(Path(p).relative_to(repo)) for p in opened if isinstance(p, str) and os.path.abspath(p) in records}

    every = {str(Path(p).relative_to(repo)) for p in repository_files(repo)}
    try:
        assert poll(0) >= every  # the first: every record file (307)
        time.sleep(RACY)  # the incident just filed is not read again for being recent
        assert poll(1) == {"incidents/INC-0400.yaml", str(PAGE)}
    finally:
        watcher.close()
    assert [(o.action, o.incident, o.occurrences) for o in filed] == [("created", "INC-0400", 1),
                                                                      ("occurrence", "INC-0400", 2)]


_recording = False
