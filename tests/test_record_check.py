"""Issue 22, item 2: one function says whether a record's text is valid, for validate, new records and edits.

:func:`tooling.rules.record_check.findings` is what an edit checks its result with (``tooling set``,
the reporter's writes, the watch's occurrences) and what a new record is held to;
``tooling validate`` reads its files through the same reading and own rules, then runs the
cross-record rules over all of them. Held here, for records drawn from the schemas
(tests/record_strategies.py):

- a record file's text is judged as ``tooling validate FILE`` judges the file;
- the other records read as far as the rules ask (``Repository``: the files named like the ids
  the rules name) give the findings that every record loaded gives (``Listed``, what ``tooling
  set`` hands over), in repositories damaged in the ways that test those rules: a record gone, a
  record that does not load, a second file of an id (``X.yml`` beside ``X.yaml``), a record in a
  folder of its own or in another kind's folder, a loop of ``repeat_of``, ladders, a link out of
  the repository. (Not drawn: a file whose id is not its name, which a write finds only under its
  name; validate reports its id-mismatch.)

Examples: an eighth of the Hypothesis profile's (each draws and writes a repository, then checks
every record of it several ways; 25 take about ten seconds); ``--hypothesis-profile=long`` for more.
"""
from __future__ import annotations

import shutil
import tempfile
from datetime import datetime
from pathlib import Path
import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from record_strategies import RecordSet, record_sets
from support import CORPUS, tooling
from tooling.records.findings import Finding, Severity
from tooling.records.kinds import KINDS
from tooling.records.layout import repository_files
from tooling.records.reading import read_text
from tooling.rules.others import Listed, Repository
from tooling.rules.record_check import findings
from tooling.rules.validate import repository_records, validate
from tooling.writers.record_text import render

NOW = datetime.fromisoformat("2026-11-29T12:00:00+00:00")
EXAMPLES = max(1, settings.default.max_examples // 8)
# no explain phase: it would run a failing example hundreds of times over to annotate it
CHECKS = settings(max_examples=EXAMPLES, deadline=None, phases=[p for p in Phase if p is not Phase.explain],
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
DAMAGE = ["drop", "break", "twin", "nest", "elsewhere", "loop", "ladders", "link"]


def write(root: Path, drawn: RecordSet) -> list[Path]:
    """The records as tooling writes them (tooling.writers.record_text.render)."""
    paths = []
    for (kind, record_id), data in drawn.records.items():
        folder = root / KINDS[kind].directory
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{record_id}.yaml"
        path.write_text(render(kind, data, directory=folder, header="Drawn."), encoding="utf-8")
        paths.append(path)
    return paths


def as_validate_reports(found: list[Finding]) -> list[Finding]:
    """Validate's order, and its silence on a suggestion beside an error or a warning."""
    noted = any(f.severity is not Severity.NOTE for f in found)
    return sorted(f for f in found if f.severity is not Severity.NOTE or not noted)


@pytest.mark.slow  # ~10 s: a repository drawn, written and validated file by file for each example
@CHECKS
@given(record_sets(max_incidents=3))
def test_a_records_text_is_judged_as_validate_judges_its_file(drawn: RecordSet) -> None:
    with tempfile.TemporaryDirectory(prefix="drawn-") as folder:
        root = Path(folder)
        for path in write(root, drawn):
            ours = findings(str(path), path.read_text(encoding="utf-8"), others=Repository(root), now=NOW)
            assert as_validate_reports(ours) == validate([path], now=NOW, root=root).findings


def damage(root: Path, drawn: RecordSet, harm: list[str], data: st.DataObject) -> None:
    """The repository of ``drawn`` written with ``harm`` done to it."""
    incidents = [record_id for kind, record_id in drawn.records if kind == "incident"]
    if "loop" in harm and len(incidents) >= 2:  # a repeat_of loop through two or three incidents
        loop = data.draw(st.lists(st.sampled_from(incidents), min_size=2, max_size=3, unique=True), label="loop")
        for here, there in zip(loop, [*loop[1:], loop[0]]):
            drawn.records[("incident", here)]["repeat_of"] = there
    write(root, drawn)

    def pick(label: str) -> Path | None:
        files = sorted(Path(p) for p in repository_files(root) if Path(p).is_file() and not Path(p).is_symlink())
        return data.draw(st.sampled_from(files), label=label) if files else None

    if "ladders" in harm:
        shutil.copytree(CORPUS / "runbooks" / "ladders", root / "runbooks" / "ladders", dirs_exist_ok=True)
    if "twin" in harm and (twin := pick("twin")):  # the same record under a second name of its id
        shutil.copy(twin, twin.with_suffix(".yml"))
    if "nest" in harm and (moved := pick("nest")):  # a record in a folder of its own below its kind's
        (moved.parent / "archive").mkdir(exist_ok=True)
        moved.rename(moved.parent / "archive" / moved.name)
    if "elsewhere" in harm and (moved := pick("elsewhere")):  # in another kind's folder: its kind is in it
        target = root / ("runbooks" if "incidents" in moved.parts else "incidents") / moved.name
        target.parent.mkdir(exist_ok=True)
        if not target.exists():
            moved.rename(target)
    if "link" in harm and (linked := pick("link")):  # a record replaced by a link to a copy outside
        outside = root.parent / f"outside-{linked.name}"
        shutil.copy(linked, outside)
        linked.unlink()
        linked.symlink_to(outside)
    if "break" in harm and (broken := pick("break")):
        broken.write_text("kind: incident\nid: [broken\n", encoding="utf-8")
    if "drop" in harm and (dropped := pick("drop")):
        dropped.unlink()


@pytest.mark.slow  # ~15 s: each record of a drawn repository checked four ways
@CHECKS
@given(record_sets(max_incidents=4), st.lists(st.sampled_from(DAMAGE), max_size=4, unique=True), st.data())
def test_a_write_reads_the_records_its_rules_name_and_finds_what_every_record_would(
        drawn: RecordSet, harm: list[str], data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory(prefix="drawn-") as folder:
        root = Path(folder) / "repo"
        root.mkdir()
        damage(root, drawn, harm, data)
        every = Listed(repository_records(root, jobs=1))
        for path in repository_files(root):
            text, problem = read_text(path)
            if problem is not None:
                continue  # a link out of the repository, gone or broken: no text to write
            assert text is not None
            found = {}
            for warnings in (True, False):
                found[warnings] = findings(path, text, others=every, now=NOW, warnings=warnings)
                assert findings(path, text, others=Repository(root), now=NOW, warnings=warnings) == found[warnings]
            for rule in sorted({f.rule for f in found[True]}):
                event(rule)
            # without the warning rules: the same errors, in the same order (a refusal says them all)
            assert [f for f in found[True] if f.severity is not Severity.WARNING] == found[False]


def test_a_write_refused_for_a_second_file_of_its_id_says_so_as_before(repo: Path) -> None:
    """The rules' answers by file name: a run page copied to NAME.yml is another file of the id."""
    page = repo / "runbooks" / "runs" / "demo-7b.yaml"
    shutil.copy(page, page.with_suffix(".yml"))
    result = tooling("report", "demo-7b", "--step", "10", "--now", "2026-11-29T12:00:00+00:00", cwd=repo)
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "", "tooling: error: runbooks/runs/demo-7b.yaml:2:5: [duplicate-id] id 'demo-7b' is also used by "
               "runbooks/runs/demo-7b.yml; expected a unique id (not changed: the edit would make the record "
               "invalid)\n")
    assert page.read_text() == page.with_suffix(".yml").read_text()
