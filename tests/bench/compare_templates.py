"""Which template groups error lines better: the project's own normalisation
(tooling.catalogue.codes.line_words, what `tooling repeats` and an unclassified draft key by) or
drain3's template miner. Each incident of a labelled repeat set is grouped by the template of its
first error line; pairwise precision and recall against the set's labels.

Run: .venv/bin/python tests/bench/compare_templates.py, with drain3 importable (pip install drain3,
or DRAIN3_PATH=a folder it is installed in): drain3 is not a dependency of the project. The figures
are in tests/corpus/README.md.
"""
from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from tooling.catalogue.codes import line_words
from tooling.catalogue.signatures import is_progress, looks_like_an_error, without_prefix

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
MIN_TOKENS = 3  # as tooling.analysis.identity: fewer words group nothing


def corpus(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """(incident -> its first error line, incident -> label) of a labelled set."""
    labels: dict[str, str] = {}
    for part in sorted((CORPUS / name / "labels").glob("*.yaml")):
        labels.update(yaml.safe_load(part.read_text("utf-8")) or {})
    lines = {}
    for path in sorted((CORPUS / name / "incidents").glob("*.yaml")):
        data = yaml.safe_load(path.read_text("utf-8"))
        errors = [s for s in data.get("signatures") or [] if looks_like_an_error(s) and not is_progress(s)]
        if errors and data["id"] in labels:
            lines[data["id"]] = errors[0]
    return lines, labels


def score(keys: dict[str, Any], labels: dict[str, str]) -> tuple[int, int, int, float, float, float]:
    tp = fp = fn = 0
    for a, b in itertools.combinations([i for i in keys if keys[i]], 2):
        same, grouped = labels[a] == labels[b], keys[a] == keys[b]
        tp, fp, fn = tp + (same and grouped), fp + (grouped and not same), fn + (same and not grouped)
    precision, recall = (tp / (tp + fp) if tp + fp else 1.0), (tp / (tp + fn) if tp + fn else 1.0)
    return tp, fp, fn, precision, recall, 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def drain(lines: dict[str, str], similarity: float, masked: bool) -> dict[str, int]:
    from drain3 import TemplateMiner
    from drain3.masking import MaskingInstruction
    from drain3.template_miner_config import TemplateMinerConfig

    config = TemplateMinerConfig()
    config.drain_sim_th, config.profiling_enabled = similarity, False
    config.masking_instructions = [
        MaskingInstruction(r"(/[\w.@%+=:,~-]+)+/?", "PATH"), MaskingInstruction(r"\b0x[0-9a-fA-F]+\b", "HEX"),
        MaskingInstruction(r"\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b", "IP"), MaskingInstruction(r"-?\d+(\.\d+)?", "NUM"),
    ] if masked else []
    miner = TemplateMiner(config=config)
    return {i: miner.add_log_message(without_prefix(line))["cluster_id"] for i, line in lines.items()}


def main() -> None:
    if os.environ.get("DRAIN3_PATH"):
        sys.path.insert(0, os.environ["DRAIN3_PATH"])
    row = "  %-28s tp %d fp %d fn %d  P %.2f R %.2f F1 %.2f"
    for name in ("realworld", "heldout-repeats", "heldout-repeats-2"):
        lines, labels = corpus(name)
        own = {i: (k if len((k := line_words(line, limit=10)).split()) >= MIN_TOKENS else "") for i, line in lines.items()}
        print(f"{name}: {len(lines)} incidents with an error line")
        print(row % ("own (line_words)", *score(own, labels)))
        for masked, similarity in ((False, 0.4), (False, 0.7), (True, 0.4), (True, 0.5), (True, 0.7)):
            print(row % (f"drain3 masks={masked:d} sim={similarity}", *score(drain(lines, similarity, masked), labels)))


if __name__ == "__main__":
    main()
