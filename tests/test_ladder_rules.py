"""The bundled ladders as runbooks, the ladder-missing rule and the symptom-to-ladder map."""
from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import markdown
import pytest
import yaml

from support import CORPUS, PROJECT, tooling
from tooling.analysis.incidents import incident_views
from tooling.analysis.paging import paging
from tooling.records.model import Record
from tooling.site.fences import fenced

# the English ladders; crash.ko.yaml and the like are their translations (tests/test_overlays.py)
LADDERS = sorted(p for p in (PROJECT / "runbooks" / "ladders").glob("*.yaml") if "." not in p.stem)


def _ladder(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


@pytest.mark.parametrize("path", LADDERS, ids=[p.stem for p in LADDERS])
def test_every_step_says_what_to_expect_and_what_to_do_next(path: Path) -> None:
    steps = _ladder(path)["steps"]
    assert [n for n, s in enumerate(steps, 1) if not (s.get("expect") and s.get("next"))] == []
    costs = [s["cost_seconds"] for s in steps]
    assert costs == sorted(costs)  # cheapest first
    for number, step in enumerate(steps, 1):  # "go to step 12" must name a step of this ladder
        text = " ".join(" ".join(step[k].split()) for k in ("expect", "look_for", "next"))
        named = [int(n) for n in re.findall(r"\bsteps? (\d+)", text) + re.findall(r"\bsteps \d+ to (\d+)", text)]
        assert all(1 <= n <= len(steps) for n in named), (number, named)


def test_the_new_ladders_declare_what_their_commands_need() -> None:
    """A check that needs root, a GPU, SLURM or a PID says so, so triage skips it with the reason."""
    needs = {"dmesg": "root", "nvidia-smi": "gpu", "sacct": "slurm", "sinfo": "slurm", "perfquery": "root",
             "py-spy": "pid", "all_reduce_perf": "gpu"}
    for path in LADDERS:
        for step in _ladder(path)["steps"]:
            for program, need in needs.items():
                if step.get("command", "").startswith(program):
                    assert need in step.get("requires", []), (path.stem, step["name"])


def test_every_symptom_of_the_bundled_incidents_has_a_ladder() -> None:
    served = {s for p in LADDERS for s in [_ladder(p)["symptom"], *_ladder(p).get("also_for", [])]}
    used = {yaml.safe_load(p.read_text())["symptom"] for p in (PROJECT / "incidents").glob("INC-*.yaml")}
    assert used - served == set()
    assert {_ladder(p)["symptom"] for p in LADDERS} >= {"crash", "checkpoint", "slowdown", "nan", "hang", "divergence"}


def _repo(tmp_path: Path, symptoms: list[str], ladder_extra: str = "") -> Path:
    """The valid corpus's run and hang ladder, with one incident per symptom given (INC-0001...)."""
    (tmp_path / "runbooks" / "ladders").mkdir(parents=True)
    shutil.copytree(CORPUS / "runbooks" / "runs", tmp_path / "runbooks" / "runs")
    hang = (CORPUS / "runbooks" / "ladders" / "hang.yaml").read_text()
    (tmp_path / "runbooks" / "ladders" / "hang.yaml").write_text(hang.replace("symptom: hang\n",
                                                                              "symptom: hang\n" + ladder_extra))
    (tmp_path / "incidents").mkdir()
    for number, symptom in enumerate(symptoms, 1):
        (tmp_path / "incidents" / f"INC-{number:04d}.yaml").write_text(
            f"kind: incident\nid: INC-{number:04d}\ntitle: Something went wrong, number {number}\nrun: demo-7b\n"
            f"status: open\nseverity: sev3\nsymptom: {symptom}\nlayer: unknown\n"
            f"detected_at: 2026-11-{number:02d}T01:00:00+00:00\n")
    return tmp_path


def test_ladder_missing_warns_once_per_symptom_on_its_first_incident(tmp_path: Path) -> None:
    root = _repo(tmp_path, ["hang", "crash", "slowdown", "crash", "other"])
    result = tooling("validate", cwd=root)
    assert result.returncode == 0  # a warning
    assert result.stdout == (
        "incidents/INC-0002.yaml:7:10: [ladder-missing] warning: symptom 'crash' has 2 incidents but no ladder; "
        "expected runbooks/ladders/crash.yaml, or 'crash' under also_for of the closest ladder\n"
        "incidents/INC-0003.yaml:7:10: [ladder-missing] warning: symptom 'slowdown' has 1 incident but no ladder; "
        "expected runbooks/ladders/slowdown.yaml, or 'slowdown' under also_for of the closest ladder\n")
    assert tooling("validate", "--strict", cwd=root).returncode == 1


def test_a_symptom_mapped_with_also_for_needs_no_ladder_of_its_own(tmp_path: Path) -> None:
    root = _repo(tmp_path, ["hang", "crash", "slowdown"], ladder_extra="also_for: [crash, slowdown]\n")
    result = tooling("validate", "--strict", cwd=root)
    assert (result.returncode, result.stdout) == (0, "")


def test_a_repository_without_ladders_gets_no_ladder_warnings(tmp_path: Path) -> None:
    root = _repo(tmp_path, ["crash", "slowdown"])
    shutil.rmtree(root / "runbooks" / "ladders")
    result = tooling("validate", "--strict", cwd=root)
    assert (result.returncode, result.stdout) == (0, "")


def _records(symptoms: list[str]) -> list[Record]:
    return [Record(f"incidents/INC-{n:04d}.yaml", {
        "kind": "incident", "id": f"INC-{n:04d}", "title": f"Incident {n}", "symptom": symptom,
        "detected_at": f"2026-11-{n:02d}T01:00:00+00:00"}) for n, symptom in enumerate(symptoms, 1)]


def _ladders(*specs: tuple[str, list[str]]) -> list[Record]:
    return [Record(f"runbooks/ladders/{symptom}.yaml", {"kind": "ladder", "id": symptom, "symptom": symptom,
                                                         "title": f"The {symptom} ladder", "also_for": also})
            for symptom, also in specs]


def test_paging_lists_each_symptom_with_its_ladder_and_three_latest_incidents() -> None:
    incidents = incident_views(_records(["crash", "hang", "crash", "infra", "crash", "crash", "data"]))
    ladders = _ladders(("crash", ["infra"]), ("hang", []), ("nan", []))
    rows = paging(ladders, incidents)
    assert [(r.symptom, r.ladder.id if r.ladder else None, r.mapped, r.count, [v.id for v in r.recent])
            for r in rows] == [
        ("crash", "crash", False, 4, ["INC-0006", "INC-0005", "INC-0003"]),
        ("data", None, False, 1, ["INC-0007"]),
        ("hang", "hang", False, 1, ["INC-0002"]),
        ("infra", "crash", True, 1, ["INC-0004"]),
        ("nan", "nan", False, 0, []),
    ]
    assert [r.meaning for r in rows] == ["processes died", "bad or exhausted input", "no progress, processes alive",
                                         "cluster or storage trouble seen directly", "loss or gradients not finite"]


def _rendered(markdown_text: str, base: Path) -> str:
    """The HTML of ``markdown_text`` with the site's extensions that act on a fenced block."""
    return markdown.markdown(markdown_text, extensions=["pymdownx.snippets", "pymdownx.superfences",
                                                        "pymdownx.highlight"],
                             extension_configs={"pymdownx.snippets": {"base_path": [str(base)], "check_paths": True}})


def _code_text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", re.search(r"<code>(.*?)</code>", page, re.DOTALL).group(1)))


@pytest.mark.parametrize("command", [
    "echo ``` and ```` inside; grep -E 'a|b' <log.txt",
    '--8<-- "secret.md"',
    "  ;--8<-- 'secret.md'",
    "<script>alert(1)</script> [x](javascript:alert(2))",
    "first line\nsecond line",
])
def test_a_command_is_shown_exactly_as_written(tmp_path: Path, command: str) -> None:
    (tmp_path / "secret.md").write_text("SECRET CONTENT\n")
    page = _rendered(f"Before.\n{fenced(command)}\nAfter.\n", tmp_path)
    assert _code_text(page) == command + "\n"
    assert "SECRET" not in page and "<script>" not in page
    assert page.startswith("<p>Before.</p>") and page.endswith("<p>After.</p>")
