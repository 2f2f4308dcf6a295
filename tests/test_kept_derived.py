"""What the analysis derives from each record file alone, kept beside its check
(tooling.analysis.derived): read back for an unchanged file, made again for a changed one, ignored
when it is not what this code writes, and `tooling repeats` says the same with it or without."""
from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tooling.analysis import load_analysis
from tooling.analysis.derived import CODES, IDENTITY, SIGNATURES, TERMS
from tooling.commands.repeats import as_json
from tooling.errors import UserError
from tooling.records.findings import Finding
from tooling.rules.kept import KeptChecks
from tooling.rules.validate import OWN

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
SETTLED = 10**18  # ns: older than any save, so a file's check (and what is derived from it) is kept
XID = "NVRM: Xid (PCI:0000:ca:00): 79, GPU has fallen off the bus."
ENOSPC = "OSError: [Errno 28] No space left on device"
NAN = "loss is nan at step 120"


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TOOLING_NO_CACHE", raising=False)


def repository(root: Path, signatures: list[str]) -> Path:
    (root / "runbooks" / "runs").mkdir(parents=True)
    (root / "runbooks" / "runs" / "demo-7b.yaml").write_text(
        "kind: run\nid: demo-7b\ntitle: Demo\nowner: alice\nstate: running\nupdated_at: 2026-11-28T09:00:00+00:00\n")
    os.utime(root / "runbooks" / "runs" / "demo-7b.yaml", ns=(SETTLED, SETTLED))  # kept as the incidents are
    (root / "incidents").mkdir()
    for number, signature in enumerate(signatures, 1):
        incident(root, number, signature)
    return root


def incident(root: Path, number: int, signature: str, *, at: int = SETTLED) -> None:
    path = root / "incidents" / f"INC-{number:04d}.yaml"
    path.write_text(f"kind: incident\nid: INC-{number:04d}\ntitle: Training stopped {number}\nrun: demo-7b\n"
                    f"status: resolved\nseverity: sev2\nsymptom: crash\nlayer: unknown\nsignatures:\n"
                    f"  - {signature!r}\ndetected_at: 2026-11-0{number}T04:00:00+00:00\n"
                    f"resolved_at: 2026-11-0{number}T05:00:00+00:00\n", "utf-8")
    os.utime(path, ns=(at, at))


def analysed(root: Path, *, kept: bool) -> tuple[dict[str, object], dict[str, tuple[str, ...] | None]]:
    """`tooling repeats --json` of ``root``, and each incident's identity key."""
    analysis = load_analysis(root, now=NOW, checked=KeptChecks(root) if kept else None)
    return as_json(analysis), {i: found.key for i, found in analysis.identities.items()}


def derived(root: Path) -> dict[str, dict[str, object]]:
    """File name -> what is kept of it, as the next command reads it."""
    return {Path(key[2]).name: found for key, found in KeptChecks(root).derived.items()}


def test_what_is_derived_from_an_unchanged_file_is_kept_and_read_back(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo", [XID, XID, ENOSPC, NAN])
    fresh = analysed(root, kept=False)
    assert analysed(root, kept=True) == fresh
    kept = derived(root)
    assert sorted(kept) == [*(f"INC-{n:04d}.yaml" for n in (1, 2, 3, 4)), "demo-7b.yaml"]
    # the codes only of incidents whose key another one has: grouping asks for no others'
    shared = {"INC-0001.yaml", "INC-0002.yaml"}
    assert all(set(found) == {IDENTITY, TERMS, SIGNATURES, OWN} | ({CODES} if name in shared else set())
               for name, found in kept.items() if name != "demo-7b.yaml")
    assert kept["INC-0002.yaml"][CODES] == {"xid": frozenset({"mode:gpu.fell-off-bus"})}
    assert kept["demo-7b.yaml"] == {OWN: ()}, "a run: the findings of its own rules (none), nothing analysed"
    assert analysed(root, kept=True) == fresh
    # read back, not made again: a kept identity planted for INC-0004 is the one the analysis uses
    checks = KeptChecks(root)
    key = next(k for k in checks.derived if k[2].endswith("INC-0004.yaml"))
    checks.derived[key][IDENTITY] = (("text", "planted words here"), None, ())
    checks.changed = True
    checks.save()
    assert analysed(root, kept=True)[1]["INC-0004"] == ("text", "planted words here")
    # and kept codes: planted codes of another Xid's failure keep INC-0002 apart from INC-0001
    def failures() -> list[list[str]]:
        return [c["failures"] for c in analysed(root, kept=True)[0]["candidates"]]  # type: ignore[attr-defined]
    assert failures() == [[["INC-0001", "INC-0002"]]]
    checks = KeptChecks(root)
    key = next(k for k in checks.derived if k[2].endswith("INC-0002.yaml"))
    checks.derived[key][CODES] = {"xid": frozenset({"xid:31"})}
    checks.changed = True
    checks.save()
    assert failures() == [[["INC-0001"], ["INC-0002"]]]  # still one automation's
    # a kept value not of coded()'s shape (another version's, a damaged file) is made again, not used
    checks = KeptChecks(root)
    checks.derived[key][CODES] = {"xid": ["xid:31"]}
    checks.changed = True
    checks.save()
    assert failures() == [[["INC-0001", "INC-0002"]]]


def test_a_changed_file_is_derived_again(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo", [XID, XID, ENOSPC])
    analysed(root, kept=True)
    before = derived(root)["INC-0003.yaml"]
    incident(root, 3, XID, at=SETTLED + 10**9)  # now the same failure as the other two
    assert analysed(root, kept=True) == analysed(root, kept=False)
    keys = analysed(root, kept=True)[1]
    assert keys["INC-0003"] == keys["INC-0001"] != before[IDENTITY][0]  # type: ignore[index]
    assert derived(root)["INC-0003.yaml"] != before


def test_the_findings_of_a_records_own_rules_are_kept_and_found_again_once_it_changes(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo", [XID, NAN])
    expected = analysed(root, kept=False)
    analysed(root, kept=True)
    checks = KeptChecks(root)
    key = next(k for k in checks.derived if k[2].endswith("INC-0002.yaml"))
    assert checks.derived[key][OWN] == ()
    # read back, not found again: a finding planted for the unchanged file stops the command
    checks.derived[key][OWN] = (Finding(key[2], 9, 1, "time-order", "planted, never found"),)
    checks.changed = True
    checks.save()
    with pytest.raises(UserError, match="planted, never found"):
        analysed(root, kept=True)
    path = root / "incidents" / "INC-0002.yaml"
    path.write_text(path.read_text("utf-8").replace("resolved_at: 2026-11-02T05", "resolved_at: 2026-11-02T03"))
    os.utime(path, ns=(SETTLED + 10**9,) * 2)  # changed: its own rules run again, the time-order is real
    with pytest.raises(UserError, match=r"INC-0002.yaml:\d+:\d+: \[time-order\] resolved_at"):
        analysed(root, kept=True)
    incident(root, 2, NAN, at=SETTLED + 2 * 10**9)
    assert analysed(root, kept=True) == expected


def test_what_this_code_does_not_write_is_made_again(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo", [XID, ENOSPC, ENOSPC, NAN])
    expected = analysed(root, kept=False)
    analysed(root, kept=True)
    checks = KeptChecks(root)
    for found, junk in zip(checks.derived.values(), [("not", "an identity", "at all", "!"), 7, None, "x", ("y",)]):
        found.update({IDENTITY: junk, TERMS: junk, SIGNATURES: junk, OWN: junk})
    checks.changed = True
    checks.save()
    assert analysed(root, kept=True) == expected
    again = derived(root)
    assert all(isinstance(found[TERMS], dict) for name, found in again.items() if name != "demo-7b.yaml"), \
        "made again and kept"
    assert all(found[OWN] == () for found in again.values())


def test_what_was_derived_under_other_code_is_not_read(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo", [XID, ENOSPC])
    analysed(root, kept=True)
    assert KeptChecks(root).derived
    other = KeptChecks(root)
    other.code = "another version of the code"  # as written by other code: whole, then ignored
    other.changed = True
    other.save()
    assert not KeptChecks(root).derived and not KeptChecks(root).kept
    assert analysed(root, kept=True) == analysed(root, kept=False)


def test_a_command_writes_its_kept_file_once_and_keeps_the_checks_when_a_record_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Validate's checks and what the analysis derived are written together, once a command
    (each write of 100,000 files' checks is a second and a half); a command stopped by an invalid
    record still keeps the checks of the others, so the next one reads only what changed."""
    import tooling.rules.kept as kept

    writes: list[Path] = []
    write = kept.replace_file
    monkeypatch.setattr(kept, "replace_file", lambda path, data: (writes.append(path), write(path, data))[1])
    root = repository(tmp_path / "repo", [XID, ENOSPC, NAN])
    analysed(root, kept=True)
    assert len(writes) == 1
    refused = root / "incidents" / "INC-0004.yaml"
    refused.write_text("kind: incident\nid: INC-0004\n", "utf-8")
    os.utime(refused, ns=(SETTLED, SETTLED))  # settled: its check is kept too
    with pytest.raises(UserError, match="records do not validate"):
        analysed(root, kept=True)
    assert len(writes) == 2
    assert any(key[2].endswith("INC-0004.yaml") for key in KeptChecks(root).kept)
    assert sorted(derived(root)) == ["INC-0001.yaml", "INC-0002.yaml", "INC-0003.yaml", "demo-7b.yaml"]
