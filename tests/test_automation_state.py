"""Each automation knows its implementation (issue 24 item 5): the catalogue says what ships for
each entry and how to turn it on, or why it is guidance only; a candidate's automation is not
available, available, or in place (an incident of the failure `handled_by` it), with what it
handled; and the ranking puts an automation not working first and one handling its failure last."""
from __future__ import annotations

import ast
import json
import re
from datetime import datetime, timedelta, timezone
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, strategies as st

from support import BOTH_EDITIONS, PROJECT, tooling
from tooling.analysis import analyse
from tooling.catalogue.automations import by_id, catalogue, check
from tooling.catalogue.modes import catalogue as modes
from tooling.commands import modules
from tooling.records.model import Record

NOW = "2026-11-29T12:00:00+00:00"
SHIPPED = {"collective-hang-watchdog", "gpu-xid-drain", "preemption-auto-resume", "storage-capacity-guard",
           "atomic-checkpoints", "nan-guard", "divergence-rollback", "straggler-detection", "preflight-versions",
           "data-pipeline-check"}


@pytest.mark.parametrize("automation", catalogue(), ids=lambda a: a.id)
def test_each_implementation_exists(automation: Any) -> None:
    shipped = automation.implementation
    assert (shipped is not None) == (automation.id in SHIPPED) != (automation.guidance_only is not None)
    if shipped is None:
        return
    if shipped.kind == "command":
        assert shipped.ref.removeprefix("tooling ") in {m.NAME for m in modules()}
    elif shipped.kind == "primitive":  # defined where the package's lazy names say (importing it is slow)
        module, _, name = shipped.ref.rpartition(".")
        source = find_spec(getattr(import_module(module), "_LAZY", {}).get(name, module))
        assert source is not None and source.origin is not None
        tree = ast.parse(Path(source.origin).read_text())
        assert name in {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    else:
        path = PROJECT / shipped.ref
        assert path.is_file() and path.stat().st_mode & 0o111, shipped.ref


@pytest.mark.slow  # ~4 s: the primitives import torch
def test_each_primitive_imports() -> None:
    for automation in catalogue():
        if automation.implementation is not None and automation.implementation.kind == "primitive":
            module, _, name = automation.implementation.ref.rpartition(".")
            assert isinstance(getattr(import_module(module), name), type), automation.id


def test_the_catalogue_schema_wants_an_implementation_or_why_there_is_none() -> None:
    entries = yaml.safe_load((PROJECT / "tooling" / "catalogue" / "automations.yaml").read_text())
    assert check(entries) == []
    neither = {k: v for k, v in entries[-1].items() if k != "guidance_only"}
    both = {**entries[0], "guidance_only": "and also advice"}
    wrong = {**entries[1], "implementation": {"kind": "command", "ref": "watchdog", "enable": "launch it so"}}
    problems = check([neither, both, wrong])
    assert [p.split(":")[0] for p in problems] == ["0", "1", "2/implementation/ref"], problems


# --- a made-up repository: the corpus (INC-0001 Xid 79, INC-0002 NCCL timeout, PM-0001) and more ---

def _incident(number: int, title: str, mode: str, detected: str, **fields: Any) -> str:
    base = {"kind": "incident", "id": f"INC-{number:04d}", "title": title, "run": "demo-7b", "status": "investigating",
            "severity": "sev2", "symptom": modes().get(mode).symptom, "layer": modes().get(mode).layer,
            "failure_mode": mode, "detected_at": detected, **fields}
    return yaml.safe_dump(base, sort_keys=False)


def made_up(repo: Path) -> Path:
    """An Xid 79 back after its drain-and-swap item was done (not working), two segfaults
    nothing ships for (their ladder is the runbook), and an NCCL timeout the hang watchdog has handled twice since."""
    incidents = repo / "incidents"
    pm = incidents / "PM-0001.yaml"
    pm.write_text(pm.read_text().replace("    status: open\n", "    status: done\n    done_on: 2026-11-05\n"))
    records = {
        3: _incident(3, "Xid 79 on node042 again", "gpu.fell-off-bus", "2026-11-10T08:00:00+00:00",
                     signatures=["Xid 79"], repeat_of="INC-0001"),
        4: _incident(4, "NCCL timeout, the job ended by the hang watchdog", "nccl.collective-timeout",
                     "2026-11-22T02:00:00+00:00", signatures=["NCCL WARN Timeout at work 12 on node017"],
                     occurrences=2, handled_by="collective-hang-watchdog"),
        5: _incident(5, "Segfault in the fused kernel", "process.segfault", "2026-11-12T09:00:00+00:00"),
        6: _incident(6, "Segfault in the fused kernel again", "process.segfault", "2026-11-25T09:00:00+00:00",
                     repeat_of="INC-0005"),
    }
    for number, text in records.items():
        (incidents / f"INC-{number:04d}.yaml").write_text(text)
    assert tooling("validate", cwd=repo).returncode == 0, tooling("validate", cwd=repo).stdout
    return repo


def _automation(automation_id: str, state: str, occurrences: int, since: str | None) -> dict[str, Any]:
    a = by_id(automation_id)
    assert a is not None
    shipped = a.implementation
    return {"id": a.id, "title": a.title, "what": a.automation, "playbook": a.playbook, "state": state,
            "implementation": None if shipped is None else {"kind": shipped.kind, "ref": shipped.ref,
                                                           "enable": shipped.enable},
            "guidance_only": a.guidance_only, "handled": {"occurrences": occurrences, "since": since}}


def test_repeats_json_gives_each_candidate_its_automation_state_and_handled_count(repo: Path) -> None:
    result = tooling("--now", NOW, "repeats", "--json", cwd=made_up(repo))
    assert (result.returncode, result.stderr) == (0, "")
    shown = [(c["incidents"], c["occurrences"], c["state"], c["automation"])
             for c in json.loads(result.stdout)["candidates"]]
    # by occurrences alone the watchdog's failure (3) would come first: it ranks last, below the
    # failure nobody has automated, and the automation that keeps failing ranks first
    assert shown == [
        (["INC-0001", "INC-0003"], 2, "automation not working", _automation("gpu-xid-drain", "available", 0, None)),
        (["INC-0005", "INC-0006"], 2, "not automated", _automation("runbook-first", "not available", 0, None)),
        (["INC-0002", "INC-0004"], 3, "not automated",
         _automation("collective-hang-watchdog", "in place", 2, "2026-11-22")),
    ]


def test_repeats_table_says_what_ships_and_what_it_handled(repo: Path) -> None:
    result = tooling("--now", NOW, "repeats", cwd=made_up(repo), env={"COLUMNS": "400"})
    assert result.returncode == 0, result.stderr
    cells = [" ".join(c.strip() for c in re.findall(r"│([^│]*)", line)[6:7]) for line in result.stdout.splitlines()]
    drain, data, hang = (by_id(i) for i in ("gpu-xid-drain", "runbook-first", "collective-hang-watchdog"))
    assert [c for c in cells if c] == [
        drain.title, f"available (scripts/slurm/health-check): {drain.implementation.enable}",
        data.title, f"not available: {data.guidance_only}",
        hang.title, "in place: handled 2 occurrences without a person since 2026-11-22"]




@pytest.mark.slow
def test_the_candidates_page_shows_them_in_both_editions(repo: Path) -> None:
    (made_up(repo) / "mkdocs.yml").write_text(BOTH_EDITIONS)
    result = tooling("--now", NOW, "build", "--render-only", cwd=repo)
    assert result.returncode == 0, result.stderr
    rows = {lang: [line for line in (repo / "docs" / "generated" / page).read_text("utf-8").splitlines()
                   if line.startswith(label)]
            for lang, page, label in (("en", "repeats.md", "| Automation |"), ("ko", "repeats.ko.md", "| 자동화 |"))}
    guidance = by_id("runbook-first").guidance_only.replace("-", "\\-")  # markdown escapes its dash
    assert rows["en"] == [
        "| Automation | **available** (` scripts/slurm/health-check `): to turn it on, as root on every node, the "
        "settings in /etc/default/tooling\\-health, then Prolog= and HealthCheckProgram= this script in slurm\\.conf "
        "and scontrol reconfigure \\(README, node health check\\) |",
        f"| Automation | **not available**: guidance only: {guidance} |",
        "| Automation | **in place** (` tooling watchdog `): handled 2 occurrences without a person since 2026\\-11\\-22 |"]
    assert rows["ko"][1:] == [
        f"| 자동화 | **제공 안 됨**: 가이드만 있음: {guidance} |",
        "| 자동화 | **가동 중** (` tooling watchdog `): 2026년 11월 22일부터 사람 손 없이 2번 처리함 |"]
    assert rows["ko"][0].startswith("| 자동화 | **사용 가능** (` scripts/slurm/health-check `): 켜는 방법: as root")


# --- the ranking, over any mix of handled and unhandled failures --------------------------------

MODES = ("nccl.collective-timeout", "gpu.fell-off-bus", "scheduler.preemption", "storage.quota", "training.divergence")
START = datetime(2026, 10, 1, tzinfo=timezone.utc)


@pytest.mark.slow  # ~4 s: 200 examples, each a whole analysis
@given(st.lists(st.lists(st.tuples(st.integers(1, 3), st.booleans()), min_size=1, max_size=3),
                min_size=len(MODES), max_size=len(MODES)))
def test_a_failure_its_automation_handles_ranks_below_every_other(failures: list[list[tuple[int, bool]]]) -> None:
    records, handled, number = [], {}, 0
    for mode, incidents in zip(MODES, failures):
        automation, first = modes().get(mode).automation, f"INC-{number + 1:04d}"
        for occurrences, by_automation in incidents:
            number += 1
            detected = START + timedelta(days=number)
            records.append(Record(f"incidents/INC-{number:04d}.yaml", {
                "kind": "incident", "id": f"INC-{number:04d}", "title": f"incident {number}", "run": "r",
                "status": "resolved", "severity": "sev2", "symptom": modes().get(mode).symptom,
                "layer": modes().get(mode).layer, "failure_mode": mode, "detected_at": detected.isoformat(),
                "occurrences": occurrences, **({"handled_by": automation} if by_automation else {}),
                **({"repeat_of": first} if number > int(first[4:]) else {})}))  # one failure whatever its codes
            if by_automation:
                handled.setdefault(mode, []).append((occurrences, detected.date()))
    ranked = analyse(records, now=START + timedelta(days=60)).candidates
    assert {c.failure_mode for c in ranked} == {m for m, i in zip(MODES, failures) if sum(o for o, _ in i) >= 2}
    for c in ranked:
        mine = handled.get(c.failure_mode or "", [])
        assert (c.availability, c.handled_count, c.handled_since) == (
            "in place" if mine else "available", sum(o for o, _ in mine), min((d for _, d in mine), default=None))
    order = [(c.availability == "in place", -c.occurrences) for c in ranked]
    assert order == sorted(order)
