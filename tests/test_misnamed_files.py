"""misnamed-file: a file in a record folder that looks meant for a record (INC-0015.YAML, a
record written as JSON, a name with a space or line break after .yaml) is not read, and says so."""
from __future__ import annotations

from pathlib import Path

from support import tooling

EXPECTED = "not read as a record: a record file's name is its id and .yaml (or .yml), in lower case; expected it named"


def test_a_record_file_in_capitals_is_named_not_skipped_silently(repo: Path) -> None:
    # issue 21, 13: INC-0015.YAML was skipped without a word
    record = (repo / "incidents" / "INC-0002.yaml").read_text().replace("INC-0002", "INC-0015")
    for name in ("INC-0015.YAML", "INC-0016.json", "INC-0017.yaml ", "demo-8b.Yml"):
        folder = repo / ("runbooks/runs" if name.startswith("demo") else "incidents")
        (folder / name).write_text(record)
    (repo / "incidents" / "notes.md").write_text("# not a record, and not taken for one\n")
    (repo / "incidents" / ".INC-0018.YAML").write_text(record)  # hidden: never read, never named
    # JSON that other tools leave beside records (a py-spy dump of the hang watchdog) is no record
    (repo / "incidents" / "dumps" / "hang-1").mkdir(parents=True)
    (repo / "incidents" / "dumps" / "hang-1" / "rank-3.json").write_text("[]\n")
    result = tooling("validate", cwd=repo)
    assert (result.returncode, result.stdout) == (0, (
        f"incidents/INC-0015.YAML:1:1: [misnamed-file] warning: {EXPECTED} 'INC-0015.yaml'\n"
        f"incidents/INC-0016.json:1:1: [misnamed-file] warning: {EXPECTED} 'INC-0016.yaml'\n"
        f"incidents/INC-0017.yaml :1:1: [misnamed-file] warning: {EXPECTED} 'INC-0017.yaml'\n"
        f"runbooks/runs/demo-8b.Yml:1:1: [misnamed-file] warning: {EXPECTED} 'demo-8b.yml'\n"))
    assert result.stderr == "7 files checked: 0 errors, 4 warnings\n"
    strict = tooling("validate", "--strict", "incidents", cwd=repo)
    assert strict.returncode == 1 and "[misnamed-file] not read as a record" in strict.stdout


def test_a_misnamed_file_named_on_the_command_line_is_read(repo: Path) -> None:
    record = repo / "incidents" / "INC-0015.YAML"
    record.write_text((repo / "incidents" / "INC-0002.yaml").read_text().replace("INC-0002", "INC-0015"))
    result = tooling("validate", "incidents/INC-0015.YAML", cwd=repo)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "1 file checked\n")
