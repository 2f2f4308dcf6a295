"""When in a run a failure struck (preparing the data, saving a checkpoint, loading one, evaluating,
ending an epoch).

A symptom whose causes differ (a collective timeout, a segfault, a hang) is often told apart by
the phase of the training loop it hit: a timeout while rank 0 writes a checkpoint is not the
timeout of a rank that died mid-step. Repeat grouping uses the phase an incident names where its
log line cannot say which failure it was (see :mod:`tooling.analysis.identity`). An incident
that names two phases ("fails to load right after save") names none: which one failed is not said.

What else tells the failures of a mode apart, in an incident's lines and words (a machine with no GPU, what
came in a checkpoint's place, what the fabric manager said, what followed a time limit, what zeroed a loss), is
:mod:`tooling.catalogue.distinguish`'s.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from tooling.catalogue.engine import Matcher
from tooling.catalogue.modes import FailureMode, catalogue

# in the dialect of the catalogue's patterns (matched by the same engine, without regard to case)
_CHECKPOINT = "(checkpoints?|ckpts?|state[ _]?dicts?)"
_SAVE = "(sav(e|es|ed|ing)|writ(e|es|ing))"
PHASES = {
    "checkpoint-save": [rf"\b({_SAVE}|upload(s|ed|ing)?)\b.{{0,40}}"
                        rf"\b({_CHECKPOINT}|model|weights|optimizer states?)\b",
                        rf"\b{_CHECKPOINT}\b.{{0,20}}\b{_SAVE}\b", r"\bsave_(checkpoint|state|model)", r"torch\.save\b"],
    "checkpoint-load": [rf"\b(resum(e|es|ed|ing)|restor(e|es|ed|ing)|reload(s|ed|ing)?|load(s|ed|ing)?)\b.{{0,40}}"
                        rf"\b{_CHECKPOINT}\b", rf"\b{_CHECKPOINT}\b.{{0,20}}\b(load|resum|restor)",
                        r"\bload_(checkpoint|state)"],
    "evaluation": [r"\b(eval(uation|uating|uate)?|validation|validating)\b"],
    "epoch-end": [r"\bend of (the |an |each )?epoch", r"\bepoch (end|boundary)"],
    # the dataset made ready before the first step (tokenized, mapped, grouped into chunks), often on
    # rank 0 alone while the other ranks wait: "Running tokenizer on dataset", "preprocessing the data"
    "data-preparation": [r"\btokeni[sz](e|es|ed|ing|er|ation)\b", r"\bpre-?process(es|ed|ing)?\b",
                         r"\b(prepar|mapp|group|pack)(e|es|ed|ing)\b.{0,20}\b(datasets?|data|texts|examples|samples)\b",
                         r"\b(datasets?|texts)\b.{0,20}\b(prepared|mapped|grouped|packed)\b"],
}
_OWNER = [name for name, patterns in PHASES.items() for _ in patterns]
# A save gathers the whole state on one rank and writes it out: host memory or a disk exhausted then is
# the save's own footprint, told apart from the run's (loading, initialising, training) by ``distinguish:
# [saving]`` in the catalogue.
SAVING = "checkpoint-save"


@lru_cache(maxsize=1)
def _matcher() -> Matcher:
    # one automaton: each pattern is reported on its own, so "load ... after saving" names both
    return Matcher([p for patterns in PHASES.values() for p in patterns], first_only=True)


def phase_of(data: dict[str, Any], mode: FailureMode) -> str | None:
    """The one phase an incident names, unless ``mode`` says it already (every failed checkpoint
    save struck while saving)."""
    phase = named_phase(data)
    return phase if phase is not None and phase not in _implied(mode.id) else None


def named_phase(data: dict[str, Any]) -> str | None:
    """The one phase an incident's title, keywords, root cause and signatures name, if exactly one."""
    text = " ".join([str(data.get("title", "")), *map(str, data.get("keywords", [])),
                     str(data.get("root_cause", "")), *map(str, data.get("signatures", []))])
    named = _named(text)
    return named.pop() if len(named) == 1 else None


def _named(text: str) -> set[str]:
    return {_OWNER[index] for index in _matcher().matching(text)}


@lru_cache(maxsize=None)
def _implied(mode_id: str) -> frozenset[str]:
    """The phases a mode's own title and summary name (by id: hashing a mode hashes all its fields),
    and preparing the data for a mode of the data layer: every one of its failures struck while data
    was read or prepared, so that phase tells none of them apart."""
    mode = catalogue().by_id[mode_id]  # type: ignore[attr-defined]
    return frozenset(_named(f"{mode.title} {mode.summary}") | ({"data-preparation"} if mode.layer == "data" else set()))

