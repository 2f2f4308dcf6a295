"""The home page's lookup data and the ladder links behind it (issue 26 items 2 and 3).

docs/assets/javascripts/lookup.js names a failure mode from what an engineer types, reading the
JSON tooling/site/lookup.py embeds in the page. :func:`lookup` below takes the script's steps, in
Python, over the same JSON: every proven log line of the catalogue (tests/corpus/loglines) gets its
own mode first, every public paraphrase its mode as the first suggestion, healthy output none; a
line told by a code written by its number (a CUDA error, a glog CHECK's value, a signal, NCCL's
return trace) the mode the Recogniser (for the trace, the scan) names, and what named it.
tests/site/test_lookup_browser.py runs the script itself in Chromium over the same lines.
"""
from __future__ import annotations

import json
import re
import unicodedata
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from support import PROJECT
from test_check_against_success import CHECKS, NAMING_NO_ERROR
from test_failure_modes import EVIDENCE, NORMAL, PARAPHRASES
from test_scan import NCCL_TRACE
from test_scan_attempts import CUDA_BY_NUMBER
from test_signal_named import SIGNALS
from tooling.analysis import Analysis, load_analysis
from tooling.analysis.ladder_links import incident_step, mode_step, shorten
from tooling.catalogue.modes import catalogue
from tooling.catalogue.recognise import recognise
from tooling.logs.scan import scan_logs
from tooling.records.model import Record
from tooling.site.lookup import js_pattern, lookup_data, lookup_json, pattern_words

FLAGS = re.IGNORECASE | re.MULTILINE  # lookup.js's "im"
# lines told by a code written by its number (a CUDA error, a glog CHECK's value, a signal), from the
# tests that hold the Recogniser to them; some name no error, or no mode
TOLD_BY_NUMBER = [line for line, _ in [*CHECKS, *CUDA_BY_NUMBER, *SIGNALS]] + NAMING_NO_ERROR
# lines that list the causes a failure might have: read up to the list, as the Recogniser reads them
LISTING_CAUSES = [
    "End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to "
    "high memory usage. (2) ray stop --force is called.",
    "The worker died unexpectedly. Possible reasons: the node ran out of memory (OOM), or a segmentation fault.",
    "RuntimeError: CUDA error: an illegal memory access was encountered. Likely causes: Xid 79 or an NCCL timeout",
]


@lru_cache(maxsize=1)
def data() -> dict[str, Any]:
    """The JSON as the page carries it, read back."""
    loaded = json.loads(str(lookup_json()))
    for rank, mode in enumerate(loaded["modes"]):
        mode["rank"] = rank
        mode["lines"] = [re.compile(p, FLAGS) for p in mode["recognisers"]["regex"]], mode["recognisers"]["words"]
        mode["words"] = [re.compile(p, FLAGS) for p in mode["keywords"]["regex"]], mode["keywords"]["words"]
    return loaded


def _any(matchers: tuple[list[re.Pattern[str]], list[list[str]]], text: str) -> bool:
    patterns, words = matchers
    return any(p.search(text) for p in patterns) or any(all(w in text.lower() for w in ws) for ws in words)


def _numbers(pattern: str, text: str) -> list[int]:
    return [int(next(g for g in m.groups() if g is not None)) for m in re.finditer(pattern, text, re.IGNORECASE)]


def recognised(text: str) -> str | None:
    """lookup.js's recognised(), its mode."""
    found = recognised_via(text)
    return found[0] if found else None


def recognised_via(text: str) -> tuple[str, str] | None:
    """lookup.js's recognised(): codes a mode owns, recognisers, then codes written by number read as
    their names; specific before generic. (mode id, what decided it: "" for a recogniser)."""
    d = data()
    listed = re.search(d["candidates"], text, re.IGNORECASE)  # the causes it might have: none asserted
    text = text[:listed.start()] if listed else text
    errnos = _numbers(d["errno"], text) + [d["errnoNames"][n] for n in re.findall(r"\bE[A-Z]{2,12}\b", text)
                                             if n in d["errnoNames"]]
    errnos += [n for message, n in d["errnoMessages"].items() if message in text.lower()]
    exits = [128 - v if v < 0 else v for v in _numbers(d["exit"], text)]
    found = {"xid": _numbers(d["xid"], text), "errno": errnos, "exit": exits}
    fits: dict[str, str] = {}
    for kind, label in (("xid", "Xid"), ("errno", "errno"), ("exit", "exit")):
        for code in found[kind]:
            if str(code) in d["owned"][kind]:
                fits.setdefault(d["owned"][kind][str(code)], f"{label} {code}")
    fits.update({m["id"]: "" for m in d["modes"] if m["id"] not in fits and _any(m["lines"], text)})
    for via, name in numbered(text):
        fits.update({m["id"]: via for m in d["modes"] if m["id"] not in fits and _any(m["lines"], name)})
    modes = [m for m in d["modes"] if m["id"] in fits]
    first = min(modes, key=lambda m: (m["generic"], m["rank"]), default=None)
    return (first["id"], fits[first["id"]]) if first else None


def _matches(expression: dict[str, Any], text: str) -> list[re.Match[str]]:
    flags = re.IGNORECASE if "i" in expression["flags"] else 0
    return list(re.finditer(expression["source"], text, flags))


def numbered(text: str) -> list[tuple[str, str]]:
    """lookup.js's numbered(): (what to show, the name) of each code the line writes by number."""
    tables, named = data()["numbered"], []
    for match in _matches(tables["cuda"]["expression"], text):
        number = int(match.group(1) or match.group(2))
        if str(number) in tables["cuda"]["names"]:
            named.append((f"CUDA error {number} ({tables['cuda']['names'][str(number)]})", tables["cuda"]["names"][str(number)]))
    for match in _matches(tables["checked"]["expression"], text):
        for success, value in ((match.group(2).strip(), int(match.group(3))), (match.group(1).strip(), int(match.group(4)))):
            name = tables["checked"]["names"].get(success, {}).get(str(value))
            if name:
                named.append((f"{success} check: {value} is {name}", name))
    groups = tables["signal"]["expression"]["groups"]
    for match in _matches(tables["signal"]["expression"], text):
        number = int(match.group(groups["number"]) or match.group(groups["last"]))
        description = (match.group(groups["after"]) or match.group(groups["before"]) or "").strip().lower()
        signal = tables["signal"]["names"].get(str(number))
        if signal and description.startswith(signal[1]):
            named.append((f"signal {number} ({signal[0]})", signal[0]))
    for match in _matches(tables["returned"]["expression"], text):
        named.append((f"NCCL returned {match.group(1)} ({tables['returned']['names'][match.group(1)]})",
                      tables["returned"]["names"][match.group(1)]))
    return named


def suggested(text: str) -> list[str]:
    """lookup.js's suggested(): modes whose keywords the words use, specific ones first."""
    d = data()
    words = unicodedata.normalize("NFC", text)
    cleared = re.compile(d["cleared"], re.IGNORECASE)
    if cleared.search(words):
        words = re.sub(d["clause"], lambda c: "" if cleared.search(c.group(0)) else c.group(0), words)
    modes = [m for m in d["modes"] if _any(m["words"], words)]
    return [m["id"] for m in sorted(modes, key=lambda m: (m["generic"], m["rank"]))]


def lookup(text: str) -> list[str]:
    """lookup.js's lookup(): the recognised mode, then the suggested ones, three at most."""
    first = recognised(text)
    return list(dict.fromkeys([first] if first else []) | dict.fromkeys(suggested(text)))[:3]


@pytest.mark.parametrize(("mode_id", "line"), EVIDENCE, ids=[f"{m}-{n}" for n, (m, _) in enumerate(EVIDENCE)])
def test_the_browser_matcher_finds_each_proven_line_as_its_mode(mode_id: str, line: str) -> None:
    assert (lookup(line)[:1], line) == ([mode_id], line)


@pytest.mark.parametrize(("mode_id", "text"), PARAPHRASES, ids=[f"{m}-{n}" for n, (m, _) in enumerate(PARAPHRASES)])
def test_the_browser_matcher_suggests_each_paraphrase_as_its_mode(mode_id: str, text: str) -> None:
    assert suggested(text)[:1] == [mode_id]


def test_the_browser_matcher_recognises_no_healthy_line() -> None:
    assert [line for line in NORMAL if recognised(line) is not None] == []


@pytest.mark.parametrize("line", TOLD_BY_NUMBER + LISTING_CAUSES)
def test_the_browser_matcher_reads_codes_written_by_number_as_the_recogniser_does(line: str) -> None:
    found = recognise(line)
    patterns = {repr(p) for m in catalogue().modes for p in m.recognisers}
    via = "" if found.via in patterns else found.via  # the script says "recognised from the line"
    assert (recognised_via(line), line) == (((found.mode.id, via) if found.mode else None), line)


def test_the_browser_matcher_names_the_error_nccls_return_trace_passes_up_as_the_scan_does(tmp_path: Path) -> None:
    log = tmp_path / "trace.log"
    log.write_text(NCCL_TRACE, encoding="utf-8")
    [draft] = scan_logs([log], now=datetime(2026, 11, 29, 12, tzinfo=timezone.utc)).drafts
    *inside, edge = NCCL_TRACE.splitlines()  # the trace within NCCL names nothing: the scan reads its edge
    assert [recognised_via(line) for line in inside] == [None] * len(inside)
    assert recognised_via(edge) == (draft.mode.id, "NCCL returned 3 (ncclInternalError)")
    assert recognised_via(edge.replace("-> 3", "-> 1")) == ("nccl.cuda-error", "NCCL returned 1 (ncclUnhandledCudaError)")


def test_the_expressions_for_numbered_codes_run_in_javascript_as_written() -> None:
    for reads in lookup_data()["numbered"].values():
        assert js_pattern(reads["expression"]["source"]) == reads["expression"]["source"]


@pytest.mark.parametrize(("typed", "mode_id"), [
    ("Xid 79", "gpu.fell-off-bus"), ("xid 79", "gpu.fell-off-bus"), ("NCCL timeout", "nccl.collective-timeout"),
    ("loss nan", "training.nan"), ("No space left on device", "storage.disk-full"), ("exit code 137", "host.oom-killed"),
    ("[Fri Nov 20 03:11:02 2026] NVRM: Xid (PCI:0000:ca:00): 79, pid=3310975, name=python, GPU has fallen off the bus.",
     "gpu.fell-off-bus"),
    ("디스크 꽉 참", "storage.disk-full")])
def test_what_an_engineer_types_leads_to_its_mode(typed: str, mode_id: str) -> None:
    assert lookup(typed)[:1] == [mode_id]


def test_every_pattern_runs_in_javascript_as_written() -> None:
    """No pattern falls back to its words today; one that would keeps words to match on."""
    modes = catalogue().modes
    assert [p for m in modes for p in (*m.recognisers, *m.keywords) if js_pattern(p) is None] == []
    assert [js_pattern(p) for p in (r"(?P<x>a)b", r"a(?=b)", r"\Aabc", r"x{,3}", r"(?i)nccl")] == [None] * 5
    assert pattern_words(r"(?P<code>\d+) NCCL(?= watchdog) timed out") == ["code", "nccl", "watchdog", "timed", "out"]


def test_the_data_cannot_end_its_script_element() -> None:
    text = str(lookup_json())
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text)["owned"]["xid"]["79"] == "gpu.fell-off-bus"
    assert len(lookup_data()["modes"]) == len(catalogue().modes)


# --- ladders and incidents, both ways --------------------------------------------------------

@lru_cache(maxsize=1)
def analysis() -> Analysis:
    return load_analysis(PROJECT, now=datetime(2026, 11, 29, 12, tzinfo=timezone.utc))


def _ladder(steps: list[tuple[str, str, str]]) -> Record:
    return Record(path="t.yaml", data={"kind": "ladder", "id": "t", "steps": [
        {"name": name, "look_for": look_for, "clears": clears} for name, look_for, clears in steps]})


def test_a_modes_step_is_the_one_that_names_it_and_an_incidents_the_one_that_clears_its_layer() -> None:
    ladder = _ladder([("GPUs present", "a GPU missing, uncorrectable ECC counts", "gpu-hardware"),
                      ("Kernel log", "Xid 79 at the time of the crash", "driver"),
                      ("Disk", "Use% at 100%", "storage")])
    fell, hbm = catalogue().get("gpu.fell-off-bus"), catalogue().get("gpu.hbm-ecc")
    assert (mode_step(fell, ladder), mode_step(hbm, ladder)) == (2, 1)  # a code, then a recogniser
    assert incident_step(fell, "gpu-hardware", ladder) == 1  # the step that clears where the cause sat
    assert incident_step(fell, "network-fabric", ladder) == 2  # no step clears it: the mode's step
    assert incident_step(None, "storage", ladder) == 3


def test_every_incident_has_its_ladder_and_every_ladder_lists_them() -> None:
    a = analysis()
    places = a.links.places
    assert (places["INC-0011"].ladder.id, places["INC-0011"].step) == ("crash", 2)
    assert (places["INC-0004"].ladder.id, places["INC-0004"].step_name) == ("hang", "InfiniBand link state and rate")
    assert set(places) == {v.id for v in a.incidents}  # every symptom here has a ladder
    for ladder in a.ladders:
        listed = [p.view for p in a.links.past[ladder.id].incidents]
        assert listed == sorted(listed, key=lambda v: (v.detected, v.id), reverse=True)  # newest first
        assert sorted(v.id for v in listed) == sorted(v for v, place in places.items() if place.ladder is ladder)
        assert all(p.step == step for step, ps in a.links.past[ladder.id].by_step.items() for p in ps)
    past = {p.view.id: p for p in a.links.past["crash"].incidents}
    assert past["INC-0011"].fix.startswith("Checked ECC counters on node131") and len(past["INC-0011"].fix) <= 200


def test_the_way_in_from_xid_79_is_the_crash_ladders_xid_step_and_its_incidents() -> None:
    way = next(w for w in analysis().links.ways if w.mode.id == "gpu.fell-off-bus")
    assert (way.place.ladder.id, way.place.step, way.place.step_name) == (
        "crash", 3, "Kernel log - Xid, OOM killer, segfaults")
    assert [v.id for v in way.incidents] == ["INC-0011", "INC-0002"]  # signatures that show it, newest first
    assert [m.id for m in analysis().links.seen["INC-0002"]] == ["gpu.fell-off-bus"]  # beside its own mode


def test_a_fix_is_cut_at_a_word() -> None:
    assert shorten("Drained node042; swapped in a spare", 20) == "Drained node042…"
    assert shorten("short", 20) == "short"
