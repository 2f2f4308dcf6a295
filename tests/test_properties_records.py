"""Generated records through the whole pipeline (issue 21): whatever set of records `tooling
validate` accepts without errors renders in every edition of the site, passes the markup check,
exports, and has each of its fields set and read back by `tooling set`.

The sets come from tests/record_strategies.py: records drawn from the shipped JSON Schemas, with
markdown, HTML, jinja2 and YAML metacharacters, unicode, very long lines, extreme numbers and
times in every offset, referring to each other as a repository's records do. Each set is written
by tooling's own writer (scaffold.render, the file `tooling new-incident` writes) into a fresh
repository with this project's mkdocs.yml (English and Korean), then run through the pipeline
in-process, as the commands run it:

- validate: tooling.rules.validate.validate, what `tooling validate` calls;
- build: `tooling build --render-only`'s command, then each generated page converted to HTML by
  Python-Markdown with the extensions of mkdocs.yml and read by the markup check that
  `tooling build` runs on the built site (tooling.site.markup_check), and each navigation file
  read as mkdocs-literate-nav reads it (a full mkdocs build per example would cost seconds);
- export: `tooling export`'s JSON Lines;
- set: tooling.writers.edit.set_fields, what `tooling set` calls, with the value typed as a
  person types it on the command line (YAML: quoted, or plain where it reads as itself).

Each failing example Hypothesis found is kept below as an example-based test of the real
executable; tests/conftest.py has the profiles ("default", and "long" for a longer search:
``--hypothesis-profile=long``).
"""
from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections import Counter
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import markdown
import pytest
import yaml
from hypothesis import HealthCheck, Phase, assume, event, given, settings
from hypothesis import strategies as st
from mkdocs.utils.meta import get_data

from record_strategies import REF, RecordSet, field_strategy, record_sets, settable_fields
from support import PROJECT, tooling
from tooling.commands.build import build_command
from tooling.errors import UserError
from tooling.intake.export import export_jsonl
from tooling.records.kinds import KINDS
from tooling.records.layout import record_dirs
from tooling.records.load import load_file
from tooling.records.roundtrip import load_value
from tooling.rules.validate import repository_records, validate
from tooling.site.markup_check import problems_in
from tooling.site.pages import GENERATED_DIR
from tooling.writers.edit import parse_assignment, set_fields
from tooling.writers.record_text import render

NOW = datetime.fromisoformat("2026-11-29T12:00:00+00:00")
HEADER = "A record drawn by tests/test_properties_records.py."
# What a schema-valid value for one field may still be refused for: the rules between fields.
BETWEEN_FIELDS = {"time-order", "resolved-without-time"}
SLOW = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
# No explain phase: it reruns a failing pipeline hundreds of times to annotate the example.
PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]
# A set costs about a second through the pipeline (0.2 s writing and reading it back): a quarter
# of the profile's examples each, 50 by default (a minute on two cores), 1,250 with
# --hypothesis-profile=long.
EXAMPLES = max(1, settings.default.max_examples // 4)


# --- a repository of drawn records ---------------------------------------------------------------

def write_repository(root: Path, drawn: RecordSet) -> dict[Path, dict[str, Any]]:
    """The records as tooling writes them, in a repository with this project's site settings."""
    shutil.copy(PROJECT / "mkdocs.yml", root / "mkdocs.yml")
    written = {}
    for (kind, record_id), data in drawn.records.items():
        folder = root / KINDS[kind].directory
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{record_id}.yaml"
        path.write_text(render(kind, data, directory=folder, header=HEADER), encoding="utf-8")
        written[path] = data
    return written


def repository(drawn: RecordSet) -> Iterator[tuple[Path, dict[Path, dict[str, Any]]]]:
    with tempfile.TemporaryDirectory(prefix="drawn-") as folder:
        root = Path(folder)
        yield root, write_repository(root, drawn)


# --- the markup check, on the pages as mkdocs would convert them -------------------------------

def _converter() -> markdown.Markdown:
    """Python-Markdown with mkdocs.yml's extensions and their settings, snippets read from this
    project's docs/ as `tooling build` run here reads them."""
    names, configs = [], {}
    for entry in yaml.safe_load((PROJECT / "mkdocs.yml").read_text(encoding="utf-8"))["markdown_extensions"]:
        name, config = next(iter(entry.items())) if isinstance(entry, dict) else (entry, None)
        names.append(name)
        if config:
            configs[name] = dict(config)
    configs["pymdownx.snippets"] = {**configs.get("pymdownx.snippets", {}), "base_path": [str(PROJECT / "docs")]}
    return markdown.Markdown(extensions=names, extension_configs=configs)


CONVERTER = _converter()


def nav_titles(text: str) -> Iterator[str]:
    """The titles mkdocs-literate-nav takes from a navigation file, as it takes them."""
    from mkdocs_literate_nav.parser import _extract_nav_from_content, _unescape

    nav = _extract_nav_from_content({}, text)
    assert nav is not None, f"no list in the navigation file:\n{text}"
    for item in nav.iter("li"):
        link = next((child for child in item if child.tag == "a"), None)
        assert all(not (child.tail or "").strip() for child in item), "text after a link: literate-nav refuses it"
        yield _unescape("".join(link.itertext())) if link is not None and not (item.text or "").strip() \
            else (item.text or "")


@lru_cache(maxsize=1024)
def page_problems(relative: str, text: str) -> tuple[str, ...]:
    """What the markup check of `tooling build` would say of one generated page, its front
    matter taken off (the same pages recur from set to set, the field reference and the
    catalogue in every one: each text is checked once)."""
    if not relative.rsplit("/", 1)[-1].startswith("SUMMARY"):
        return tuple(str(p) for p in problems_in(CONVERTER.reset().convert(text), relative))
    found = []
    for title in nav_titles(text):
        found += [str(p) for p in problems_in(f'<span class="md-ellipsis">{title}</span>', relative)]
        # the theme writes a title into the page as it is: markup there is markup
        raw = re.search(r"[<>`]|&(?!#124;|amp;|lt;|gt;)", title)
        found += [f"{relative}: markup in a navigation title {title!r}"] * bool(raw)
    return tuple(found)


def markup_problems(root: Path) -> list[str]:
    """What the markup check would say of every generated page of the repository at ``root``."""
    found = []
    for page in sorted((root / GENERATED_DIR).rglob("*.md")):
        relative = page.relative_to(root / GENERATED_DIR).as_posix()
        body, meta = get_data(page.read_text(encoding="utf-8"))
        assert isinstance(meta.get("title", ""), str), f"{relative}: front matter {meta!r}"
        found += page_problems(relative, body)
    return found


# --- each step ---------------------------------------------------------------------------------

def renders_in_every_edition(root: Path) -> None:
    assert build_command(root=root, now=NOW, site_dir=None, render_only=True) == 0
    pages = {p.relative_to(root / GENERATED_DIR).as_posix() for p in (root / GENERATED_DIR).rglob("*.md")}
    english = {p for p in pages if not p.endswith(".ko.md")}
    assert {p.removesuffix(".md") + ".ko.md" for p in english} == pages - english
    assert markup_problems(root) == []


def exports(root: Path, drawn: RecordSet) -> None:
    text, count = export_jsonl(root, now=NOW)
    lines = text.split("\n")
    assert lines[-1] == "" and len(lines) - 1 == count == len(drawn.of("incident"))
    exported = {o["id"]: o for o in map(json.loads, lines[:-1])}
    for data in drawn.of("incident"):
        assert {k: v for k, v in exported[data["id"]].items() if k != "path"} == data
        assert exported[data["id"]]["path"] == f"incidents/{data['id']}.yaml"


def typed(value: Any, plain: bool) -> str:
    """``value`` as a person types it after ``FIELD=``: as it is where YAML reads it back as
    itself (a time too), else in JSON's quotes and brackets, which YAML reads as well."""
    if plain and isinstance(value, str):
        try:
            if load_value(value) == value:
                return value
        except ValueError:  # not YAML as it is (': ' in it, say): a person quotes it
            pass
    return json.dumps(value, ensure_ascii=False)


def linked(value: Any, incidents: list[str]) -> Any:
    """``value`` with each stand-in for an incident (record_strategies.REF) naming the set's first."""
    if value == REF:
        return incidents[0] if incidents else value
    if isinstance(value, dict):
        return {k: linked(v, incidents) for k, v in value.items()}
    if isinstance(value, list):
        return [linked(v, incidents) for v in value]
    return value


def _at(data: Any, keys: list[str]) -> Any:
    for key in keys:
        data = data[key]
    return data


def _without(data: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """``data`` without the field at ``keys``."""
    if len(keys) == 1:
        return {k: v for k, v in data.items() if k != keys[0]}
    return {**data, keys[0]: _without(data.get(keys[0], {}), keys[1:])}


def comments(text: str) -> Counter[str]:
    return Counter(line.strip() for line in text.splitlines() if line.lstrip().startswith("#"))


def sets_a_field(root: Path, path: Path, data: dict[str, Any], keys: list[str], value: Any, raw: str) -> None:
    """`tooling set ID FIELD=RAW`: the value read back as typed, nothing else changed but the
    run's updated_at, the comments kept, the record still valid; or refused for a rule between
    fields (or, for a field of a mapping the record lacks, the mapping's other required fields),
    the file as it was."""
    before = path.read_text(encoding="utf-8")
    allowed = BETWEEN_FIELDS | ({"missing-field"} if len(keys) > 1 and keys[0] not in data else set())
    try:
        set_fields(path, [parse_assignment(f"{'.'.join(keys)}={raw}")], universe=repository_records(root), now=NOW)
    except UserError as refused:
        rules = set(re.findall(r":\d+:\d+: \[([a-z-]+)\]", str(refused)))
        assert rules and rules <= allowed, str(refused)
        assert path.read_text(encoding="utf-8") == before
        event(f"set refused: {sorted(rules)}")
        return
    after = load_file(str(path))
    assert after.findings == [] and _at(after.data, keys) == value
    ignored = [keys, ["updated_at"]] if data["kind"] == "run" else [keys]
    expected, found = data, after.data
    for skip in ignored:
        expected, found = _without(expected, skip), _without(found, skip)
    assert found == expected
    assert comments(path.read_text(encoding="utf-8")) == comments(before)
    assert validate([path], root=root, now=NOW).errors == []


# --- the properties ----------------------------------------------------------------------------

@pytest.mark.slow
@settings(max_examples=EXAMPLES, suppress_health_check=SLOW, deadline=None, phases=PHASES)
@given(record_sets())
def test_records_as_tooling_writes_them_read_back_as_drawn(drawn: RecordSet) -> None:
    """The writer of records (ruamel, YAML 1.2 by default) and their reader (libyaml, YAML 1.1)
    agree on every value the schemas allow: a number stays the same number, text stays text, a
    time keeps its text."""
    for root, written in repository(drawn):
        for path, data in written.items():
            loaded = load_file(str(path))
            assert loaded.findings == [] and loaded.data == data


@pytest.mark.slow
@settings(max_examples=EXAMPLES, suppress_health_check=SLOW, deadline=None, phases=PHASES)
@given(record_sets(), st.data())
def test_every_valid_set_renders_exports_and_sets(drawn: RecordSet, choices: st.DataObject) -> None:
    for root, written in repository(drawn):
        report = validate(record_dirs(root), root=root, now=NOW)
        for finding in report.errors:
            event(f"not valid: [{finding.rule}]")
        assume(not report.errors)
        renders_in_every_edition(root)
        exports(root, drawn)
        path = choices.draw(st.sampled_from(sorted(written)), label="record")
        data = written[path]
        keys = choices.draw(st.sampled_from(settable_fields(data["kind"])), label="field")
        incidents = [d["id"] for d in drawn.of("incident")]
        value = choices.draw(field_strategy(data["kind"], keys).map(lambda v: linked(v, incidents)), label="value")
        assume(REF not in json.dumps(value))  # a reference to an incident of a set that has none
        raw = typed(value, choices.draw(st.booleans(), label="typed plain"))
        sets_a_field(root, path, data, keys, value, raw)


# --- what the properties found, each through the real executable --------------------------------
# (each failed on the code of commit 54dce08)

def _loaded(path: Path) -> dict[str, Any]:
    loaded = load_file(str(path))
    assert loaded.findings == []
    return loaded.data


def test_report_writes_a_loss_below_1e_4_as_a_number(repo: Path) -> None:
    """Python writes 5e-05 for 0.00005; to the records' YAML 1.1 that is text, so every report of
    a small loss was refused: 'expected a number but received: '5e-05''."""
    result = tooling("--now", "2026-11-29T12:00:00+00:00", "report", "demo-7b", "--step", "10", "--loss", "0.00005",
                     cwd=repo)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    run = _loaded(repo / "runbooks" / "runs" / "demo-7b.yaml")
    assert run["progress"]["loss"] == run["feed"]["samples"][-1]["loss"] == 5e-05
    assert tooling("validate", cwd=repo).returncode == 0


def test_set_reads_a_number_typed_as_yaml_1_2_and_writes_it_as_a_number(repo: Path) -> None:
    """`progress.loss=1e-5` is a number to a person (and to YAML 1.2, as ruamel read it), but it
    was written as typed, which the records' YAML 1.1 reads as text: the set was refused."""
    result = tooling("set", "demo-7b", "progress.loss=1e-5", "progress.step=017", cwd=repo)
    assert result.returncode == 0, result.stderr
    progress = _loaded(repo / "runbooks" / "runs" / "demo-7b.yaml")["progress"]
    assert (progress["loss"], progress["step"]) == (1e-05, 17)


def test_new_incident_quotes_text_that_yaml_1_1_reads_as_another_type(repo: Path) -> None:
    """ruamel wrote `12:30`, `on` and `no` plain, which the records' loader reads as 750, true and
    false: new-incident refused its own record ('expected a string but received: 750')."""
    result = tooling("new-incident", "--title", "NCCL timeout on node017", "--run", "demo-7b", "--severity", "sev2",
                     "--symptom", "hang", "--node", "12:30", "--node", "on", "--signature", "yes",
                     "--reported-by", "no", "--detected-at", "2026-11-21T01:00:00+00:00", cwd=repo)
    assert result.returncode == 0, result.stderr
    incident = _loaded(repo / "incidents" / "INC-0003.yaml")
    assert (incident["nodes"], incident["signatures"], incident["reported_by"]) == (["12:30", "on"], ["yes"], "no")


def test_new_incident_and_set_keep_a_time_as_typed(repo: Path) -> None:
    """ruamel read a time as a datetime and wrote it its own way: 'Z' became '+00:00', '.5'
    became '.500000', nanoseconds were rounded away, in the field set and in every other."""
    result = tooling("new-incident", "--title", "NCCL timeout on node017", "--run", "demo-7b", "--severity", "sev2",
                     "--symptom", "hang", "--detected-at", "2026-11-21 01:00:00.123456789Z", cwd=repo)
    assert result.returncode == 0, result.stderr
    path = repo / "incidents" / "INC-0003.yaml"
    assert _loaded(path)["detected_at"] == "2026-11-21 01:00:00.123456789Z"
    set_time = tooling("set", "INC-0003", "mitigated_at=2026-11-21T02:00:00.5Z", cwd=repo)
    assert set_time.returncode == 0, set_time.stderr
    assert tooling("set", "INC-0003", "title=NCCL timeout on node017 again", cwd=repo).returncode == 0
    incident = _loaded(path)
    assert (incident["detected_at"], incident["mitigated_at"]) == ("2026-11-21 01:00:00.123456789Z",
                                                                   "2026-11-21T02:00:00.5Z")


def test_set_keeps_a_number_it_did_not_touch(repo: Path) -> None:
    """ruamel rewrote a float it had read in its own format, which can round: setting the title
    changed 5.854692995234413e+307 hours to ...414e+307."""
    path = repo / "incidents" / "INC-0001.yaml"
    path.write_text(path.read_text() + "impact:\n  wall_hours_lost: 5.854692995234413e+307\n")
    assert tooling("set", "INC-0001", "title=Xid 79 on node042 again", cwd=repo).returncode == 0
    assert _loaded(path)["impact"]["wall_hours_lost"] == 5.854692995234413e+307
    assert "  wall_hours_lost: 5.854692995234413e+307\n" in path.read_text()


def test_set_of_a_list_keeps_the_comment_lines_after_it(repo: Path) -> None:
    """ruamel keeps the comment lines after a list in its last item: replacing the list threw
    them away."""
    path = repo / "runbooks" / "runs" / "demo-7b.yaml"
    comment = "# The on-call rotation: at least two people for a 24/7 run.\noncall:\n"
    path.write_text(path.read_text().replace("oncall:\n", comment))
    result = tooling("set", "demo-7b", 'known_issues=[{"incident": "INC-0001", "summary": "Xid 79 again"}]', cwd=repo)
    assert result.returncode == 0, result.stderr
    assert comment in path.read_text()
    assert _loaded(path)["known_issues"] == [{"incident": "INC-0001", "summary": "Xid 79 again"}]


def test_a_stall_threshold_past_a_week_is_refused_where_it_is_written(repo: Path) -> None:
    """feed.stall_after_minutes had no upper bound: validate passed 10**15 minutes, and the build
    then failed with an internal error (a timedelta that large overflows). It is held to a week,
    as `tooling watch --stall-after` is."""
    path = repo / "runbooks" / "runs" / "demo-7b.yaml"
    path.write_text(path.read_text() + "feed:\n  stall_after_minutes: 1000000000000000\n")
    result = tooling("validate", cwd=repo)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "runbooks/runs/demo-7b.yaml:21:24: [out-of-range] expected a number <= 10080 but received: 1000000000000000"]
    built = tooling("build", "--render-only", cwd=repo)
    assert built.returncode == 1 and "Traceback" not in built.stderr


def test_gpu_hours_past_every_gpu_in_the_world_are_refused_where_they_are_written(repo: Path) -> None:
    """impact.gpu_hours_lost had no upper bound: validate passed 1.7e308 GPU-hours, and the build
    then failed with an internal error drawing the chart of GPU-hours by layer."""
    path = repo / "incidents" / "INC-0001.yaml"
    path.write_text(path.read_text() + "impact:\n  gpu_hours_lost: 1.7e+308\n")
    result = tooling("validate", cwd=repo)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].endswith(
        "[out-of-range] expected a number <= 1000000000000 but received: 1.7e+308")
    built = tooling("build", "--render-only", cwd=repo)
    assert built.returncode == 1 and "Traceback" not in built.stderr
