"""Scoring a labelled sweep of raw logs (tests/corpus/heldout-3 and later ones): what `tooling scan`
drafted from each log against what its labels say a person would file.

A labelled failure is *drafted* when a draft covers one of its key lines (the draft's first..last
line in that log) or is of its mode; *classified* when a draft of its mode, or of a mode its label
accepts, covers it (``unclassified`` is the catalogue's ``other.unclassified``). A draft that covers
no labelled failure is a false draft. Run as a script on a sweep's folder, it runs the real
`tooling scan --json` on each log, once, and prints the table its RESULTS.md keeps.
"""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

UNCLASSIFIED = "other.unclassified"
NOW = "2026-11-29T12:00:00+00:00"


def labels(folder: Path) -> list[dict[str, Any]]:
    return yaml.safe_load((folder / "labels.yaml").read_text("utf-8"))


def _mode(label: str) -> str:
    return UNCLASSIFIED if label == "unclassified" else label


def _covers(draft: dict[str, Any], name: str, lines: list[int]) -> bool:
    return any(Path(entry["log"]).name == name and any(entry["first_line"] <= n <= entry["last_line"] for n in lines)
               for entry in draft["logs"])


@dataclass
class LogScore:
    name: str
    failures: int
    drafted: int = 0
    classified: int = 0
    false: list[str] = field(default_factory=list)  # modes of drafts that cover no labelled failure
    modes: list[str] = field(default_factory=list)  # of every draft


def score_log(label: dict[str, Any], drafts: list[dict[str, Any]]) -> LogScore:
    name = label["file"]
    result = LogScore(name, len(label["expect"]), modes=[d["failure_mode"] for d in drafts])
    used: set[int] = set()
    for expected in label["expect"]:
        modes = {_mode(expected), *map(_mode, (label.get("accept") or {}).get(expected, []))}
        keys = (label.get("key_lines") or {}).get(expected, [])
        covering = [i for i, d in enumerate(drafts) if _covers(d, name, keys) or d["failure_mode"] == _mode(expected)]
        used.update(covering)
        result.drafted += bool(covering)
        result.classified += any(drafts[i]["failure_mode"] in modes for i in covering)
    result.false = [d["failure_mode"] for i, d in enumerate(drafts) if i not in used]
    return result


def scan_json(log: Path) -> list[dict[str, Any]]:
    """The drafts of one log as the real command prints them."""
    done = subprocess.run([sys.executable, "-m", "tooling", "--now", NOW, "scan", "--json", str(log)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def table(folder: Path) -> str:
    rows, scores = ["| log | expected | drafted | verdict |", "| --- | --- | --- | --- |"], []
    for label in labels(folder):
        drafts = scan_json(folder / "logs" / label["file"])
        found = score_log(label, drafts)
        scores.append(found)
        shown = ", ".join(f"{d['failure_mode']} (l.{d['logs'][0]['first_line']}-{d['logs'][0]['last_line']})"
                          for d in drafts) or "nothing"
        verdict = "right" if found.classified == found.failures and not found.false else \
            f"{found.failures - found.drafted} missed, {found.drafted - found.classified} other mode, " \
            f"{len(found.false)} false"
        rows.append(f"| {label['file']} | {', '.join(label['expect']) or 'none'} | {shown} | {verdict} |")
    failures = sum(s.failures for s in scores)
    healthy = [s for s in scores if not s.failures]
    rows += ["", f"Failures drafted: {sum(s.drafted for s in scores)} of {failures}; under their labelled "
                 f"(or an accepted) mode: {sum(s.classified for s in scores)} of {failures}; false drafts: "
                 f"{sum(len(s.false) for s in scores)} in {len(scores)} logs, "
                 f"{sum(len(s.false) for s in healthy)} in the {len(healthy)} healthy logs "
                 f"(at most {max((len(s.false) for s in healthy), default=0)} in one)."]
    return "\n".join(rows)


if __name__ == "__main__":
    print(table(Path(sys.argv[1])))
