"""validate's checks kept on disk between commands (tooling.rules.kept): what a command reads
through them is what it reads without them, whatever was edited, added or removed between two
commands, when the kept file is corrupt, and when commands save it at once."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tooling.records.layout import record_sources
from tooling.rules import kept as kept_module
from tooling.rules.kept import FORM, KeptChecks, cache_file
from tooling.rules.validate import validate

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
SIGNATURES = ["NVRM: Xid (PCI:0000:ca:00): 79, GPU has fallen off the bus.", "loss is nan at step 120",
              "OSError: [Errno 28] No space left on device", "something odd"]


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TOOLING_NO_CACHE", raising=False)


def repository(root: Path) -> Path:
    (root / "runbooks" / "runs").mkdir(parents=True)
    (root / "runbooks" / "runs" / "demo-7b.yaml").write_text(
        "kind: run\nid: demo-7b\ntitle: Demo\nowner: alice\nstate: running\nupdated_at: 2026-11-28T09:00:00+00:00\n")
    (root / "incidents").mkdir()
    return root


def incident(root: Path, number: int, signature: str, *, status: str = "resolved", past: int = 0) -> None:
    path = root / "incidents" / f"INC-{number:04d}.yaml"
    resolved = "resolved_at: 2026-11-02T05:00:00+00:00\n" if status == "resolved" else ""
    path.write_text(f"kind: incident\nid: INC-{number:04d}\ntitle: Incident {number}\nrun: demo-7b\n"
                    f"status: {status}\nseverity: sev2\nsymptom: crash\nlayer: unknown\nsignatures:\n"
                    f"  - {signature!r}\ndetected_at: 2026-11-02T04:00:00+00:00\n{resolved}", "utf-8")
    if past:  # settled: older than a save, so the check is kept (else it is checked again)
        os.utime(path, ns=(past, past))


def seen(root: Path, *, kept: bool) -> tuple[list[tuple[str, object]], list[object]]:
    report = validate(record_sources(root), root=root, now=NOW, checked=KeptChecks(root) if kept else None)
    return [(r.path, r.data) for r in report.records], report.findings


def test_a_settled_file_is_kept_and_read_back_without_being_checked(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo")
    incident(root, 1, SIGNATURES[0], past=10**18)
    seen(root, kept=True)
    checks = KeptChecks(root)
    assert [key[2] for key in checks.kept if key[2].endswith("INC-0001.yaml")], "the settled file was kept"
    assert seen(root, kept=True) == seen(root, kept=False)


def test_the_kept_file_of_an_earlier_version_is_removed_once_this_one_is_saved(tmp_path: Path) -> None:
    """Versions before the plain pickle kept base64 beside it (150 MB at 100,000 incidents)."""
    root = repository(tmp_path / "repo")
    incident(root, 1, SIGNATURES[0], past=10**18)
    old = cache_file(root).with_suffix(".b64")
    old.parent.mkdir(parents=True)
    old.write_bytes(b"aGVsbG8=")
    seen(root, kept=True)
    assert cache_file(root).is_file() and not old.exists()


def test_a_file_changed_just_now_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # "just now" made a minute wide: on a busy machine the write and the save were over RACY apart
    monkeypatch.setattr(kept_module, "RACY", 60_000_000_000)
    root = repository(tmp_path / "repo")
    incident(root, 1, SIGNATURES[0])
    seen(root, kept=True)
    assert not [key for key in KeptChecks(root).kept if key[2].endswith("INC-0001.yaml")]


def test_a_corrupt_or_foreign_kept_file_is_ignored(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo")
    incident(root, 1, SIGNATURES[1], past=10**18)
    expected = seen(root, kept=False)
    for junk in (b"not base64 \x00\xff", b"aGVsbG8=", cache_file(root).read_bytes()[:100] if cache_file(root).exists()
                 else b"", b""):
        cache_file(root).parent.mkdir(parents=True, exist_ok=True)
        cache_file(root).write_bytes(junk)
        assert seen(root, kept=True) == expected
    assert KeptChecks(root).kept, "rewritten whole after the corrupt one"


def test_a_kept_file_of_an_earlier_form_is_ignored_and_rewritten(tmp_path: Path) -> None:
    """Before FORM, each result was pickled alone inside the file: one such, even with this code's
    fingerprint, is read as no kept file (never given out as a result), then saved in this form."""
    root = repository(tmp_path / "repo")
    incident(root, 1, SIGNATURES[0], past=10**18)
    expected = seen(root, kept=False)
    seen(root, kept=True)
    form, code, kept, derived = pickle.loads(cache_file(root).read_bytes())
    assert form == FORM and kept
    cache_file(root).write_bytes(pickle.dumps((code, {key: pickle.dumps(r) for key, r in kept.items()}, derived)))
    assert not KeptChecks(root).kept
    assert seen(root, kept=True) == expected
    assert pickle.loads(cache_file(root).read_bytes())[0] == FORM


def test_the_short_strings_of_the_records_kept_are_read_back_as_one_object_each(tmp_path: Path) -> None:
    """Field names and short values (a status, a layer) are one object in the kept file, not one
    per record; long ones (a signature) stay each record's own; the data is the same."""
    root = repository(tmp_path / "repo")
    for number in (1, 2):
        incident(root, number, SIGNATURES[0], past=10**18)
    expected = seen(root, kept=False)
    seen(root, kept=True)
    records, findings = seen(root, kept=True)  # read back from the kept file
    assert (records, findings) == expected
    one, two = (data for path, data in records if "INC-" in path)
    assert isinstance(one, dict) and isinstance(two, dict)
    assert all(a is b for a, b in zip(one, two)) and one["status"] is two["status"] and one["layer"] is two["layer"]
    assert one["signatures"][0] == two["signatures"][0] and one["signatures"][0] is not two["signatures"][0]


EDITS = st.lists(st.tuples(st.sampled_from(["write", "delete", "status"]), st.integers(1, 4),
                           st.sampled_from(SIGNATURES)), min_size=1, max_size=8)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=EDITS)
def test_what_is_read_through_the_kept_checks_is_what_is_read_without(tmp_path_factory: pytest.TempPathFactory,
                                                                      edits: list[tuple[str, int, str]]) -> None:
    root = repository(tmp_path_factory.mktemp("repo"))
    clock = 10**18
    for number in (1, 2):
        incident(root, number, SIGNATURES[number], past=clock)
    for action, number, signature in edits:
        clock += 10**9  # each edit a second later, every one settled: kept, then read back
        path = root / "incidents" / f"INC-{number:04d}.yaml"
        if action == "delete":
            path.unlink(missing_ok=True)
        else:
            incident(root, number, signature, status="open" if action == "status" else "resolved", past=clock)
        assert seen(root, kept=True) == seen(root, kept=False), edits


def test_tooling_repeats_says_the_same_with_and_without_them_and_concurrently(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo")
    for number in range(1, 13):
        incident(root, number, SIGNATURES[number % 3], past=10**18 + number)
    command = [sys.executable, "-m", "tooling", "--root", str(root), "--now", NOW.isoformat(), "repeats", "--json"]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    bare = subprocess.run(command, env={**env, "TOOLING_NO_CACHE": "1"}, capture_output=True, text=True, check=True)
    at_once = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [p.communicate()[0] for p in at_once]
    again = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    assert [p.returncode for p in at_once] == [0, 0, 0]
    assert outputs == [bare.stdout] * 3 and again.stdout == bare.stdout
    assert len(KeptChecks(root).kept) >= 12, "the kept file several commands saved at once reads back whole"
