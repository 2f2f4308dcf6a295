"""When in a run a failure struck (preparing the data, saving a checkpoint, loading one, evaluating,
ending an epoch), and whether the machine it struck has an NVIDIA GPU at all.

A symptom whose causes differ (a collective timeout, a segfault, a hang) is often told apart by
the phase of the training loop it hit: a timeout while rank 0 writes a checkpoint is not the
timeout of a rank that died mid-step. Repeat grouping uses the phase an incident names where its
log line cannot say which failure it was (see :mod:`tooling.analysis.identity`). An incident
that names two phases ("fails to load right after save") names none: which one failed is not said.

A CUDA build started where there is no NVIDIA GPU (a CPU-only node, cluster or partition, a laptop
with only an integrated GPU) fails with the line of a driver that is too old ("CUDA driver version is
insufficient for CUDA runtime version": the runtime finds no driver it can use) or of a GPU the driver
lost ("no CUDA-capable device is detected"). The line cannot tell these apart; the incident's words
can, and the handling differs: nothing there is to be upgraded or drained, the job went where it should
not have. A mode whose catalogue entry says ``distinguish: [no-gpu]`` is told apart so, and so is what
came in a checkpoint's place (``lfs-pointer``, ``web-page``) and what the fabric manager said of itself
(``fm-version``, ``fm-absent``, ``fm-nvlink5``, ``fm-nothing-to-do``), told by all of an incident's lines and words,
and so is what followed a time limit or what heat did (:mod:`tooling.catalogue.aftermath`), what made a loss
read zero or ranks fall out of step (:mod:`tooling.catalogue.causes`).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable

from tooling.catalogue.aftermath import AFTERMATH
from tooling.catalogue.causes import CAUSES
from tooling.catalogue.engine import Matcher
from tooling.catalogue.evidence import description, kinds_told
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


NO_GPU = "no-gpu"  # the distinguishing kind in the catalogue, and the key's value
# a person's words for a machine with no NVIDIA GPU in it; never a GPU node that lost its GPUs
# ("no GPUs visible on the node" is the driver's failure there, not a machine without one)
_WITHOUT_GPU = re.compile(
    r"\bcpu[- ]only\b"
    r"|\bcpu (clusters?|nodes?|partitions?|machines?|servers?|instances?|queues?)\b"
    r"|\bintegrated (intel |amd )?([a-z]+ ){0,2}(gpus?|graphics)\b"
    r"|\b(has|have|with) no (nvidia |cuda )?(gpus?|graphics cards?)\b"
    r"|\bwithout (an? )?(nvidia |cuda )?(gpus?|graphics cards?)\b",
    re.IGNORECASE)


def without_gpu(data: dict[str, Any]) -> bool:
    """Whether an incident's title, keywords or root cause say its machine has no NVIDIA GPU."""
    return _WITHOUT_GPU.search(description(data)) is not None


PAST_VOCABULARY = "vocabulary"  # the distinguishing kind in the catalogue, and the key's value
# a person's words for token ids past the model's embedding: the tokenizer grown (tokens added, a
# custom one) without resizing the embedding, or the two out of step. Never a position embedding's
# length ("max_position_embeddings": another table) nor an index into a person's own small embedding
_PAST_VOCABULARY = re.compile(
    r"\bresiz\w* (?:the |its |model |token |input )*embeddings?\b|\bresize_token_embeddings\b"
    r"|\b(?:add(?:ed|ing|s)?|new) (?:a |few |new |special |extra )*tokens?\b"
    r"|\btokenizer\b.{0,60}\b(?:embedding|vocab)|\b(?:token )?embedding\b.{0,60}\btokenizer\b"
    r"|\bvocab(?:ulary)?(?: size)? (?:mismatch|differs|larger|bigger)", re.IGNORECASE)


def past_vocabulary(data: dict[str, Any]) -> bool:
    """Whether an incident's title, keywords or root cause say its token ids ran past the embedding."""
    return _PAST_VOCABULARY.search(description(data)) is not None


# A state dict whose size mismatch has an empty side (a parameter of no elements, torch.Size([0])) was
# not written or not read as a model: an engine that shards the parameters (DeepSpeed ZeRO-3, FSDP)
# leaves each rank an empty placeholder in place of its module's. Empty in the checkpoint, the weights
# were saved without being gathered; empty in the model, it was sharded before the weights were loaded.
# Which parameter and what shape vary; the side does not. Read from all of an incident's lines together
SAVED_EMPTY, LOADED_EMPTY = "saved-empty", "loaded-empty"  # the distinguishing kinds, and the key's values
_EMPTY_IN = {SAVED_EMPTY: re.compile(r"with shape torch\.Size\(\[0\]\) from checkpoint"),
             LOADED_EMPTY: re.compile(r"shape in current model is torch\.Size\(\[0\]\)")}
# and a person's words for a saved model with nothing in it: its weights of shape 0, a file of a few KB
_SAVED_EMPTY_WORDS = re.compile(
    r"\b(?:saved|saving|saves)\b.{0,80}\b(?:shapes?|sizes?|dimensions?) (?:of |is |are |= ?)?(?:0|zero)\b"
    r"|\b(?:saved|saves)\b.{0,80}\bonly [0-9.]+ ?(?:k|kb|m|mb)\b", re.IGNORECASE)


def _empty_in(kind: str) -> Callable[[dict[str, Any]], bool]:
    pattern = _EMPTY_IN[kind]
    said = (lambda data: _SAVED_EMPTY_WORDS.search(description(data)) is not None) if kind == SAVED_EMPTY \
        else (lambda data: False)
    return lambda data: any(pattern.search(str(line)) for line in data.get("signatures", [])) or said(data)


# What came in a checkpoint's place, told by the byte pickle read first or by a person's words: a Git LFS
# pointer ('v' of "version https://git-lfs...": a clone without git-lfs, an LFS quota spent) or a web page
# ('<' of "<html>": a download's error page). Both files are whole and fetched wrong; the remedies differ
# (git lfs pull; the file from its host), so they are two failures. All of an incident's lines and words
LFS_POINTER, WEB_PAGE = "lfs-pointer", "web-page"  # the distinguishing kinds, and the key's values
_FETCHED = {LFS_POINTER: re.compile(r"invalid load key, '?v\b|version https://git-lfs|\bgit[- ]?lfs\b", re.I),
            WEB_PAGE: re.compile(r"invalid load key, '?<|\bhtml\b", re.I)}


_fetched = kinds_told(_FETCHED, {})


# What the fabric manager said of itself, told by its own line or a person's words. CUDA's error 802 reads
# the same whatever kept the NVSwitch fabric down; the remedies differ: a fabric manager at another
# version than the driver refuses to start (the two at one version), one never installed is installed,
# one on NVLink 5 (B200 and later) lacks what it needs there (NVLSM, the InfiniBand modules), and one with
# nothing to do ("NV_WARN_NOTHING_TO_DO") found no NVSwitch to manage. A version that does not match says
# the fabric manager is there, so it is not absent; on NVLink 5 nothing to do is NVLSM missing.
FM_VERSION, FM_ABSENT, FM_NVLINK5, FM_NOTHING_TO_DO = "fm-version", "fm-absent", "fm-nvlink5", "fm-nothing-to-do"
_FM = r"(?:nv-|nvidia[- ])?fabric ?manager"
_FABRIC = {
    FM_VERSION: re.compile(rf"driver interface version \S+ (?:don.t|doesn.t|do not|does not) match"
                           rf"|{_FM}\b.{{0,80}}(?:mismatch|not (?:be )?in sync|out of sync|(?:don.t|doesn.t|do not|does not) match)"
                           rf"|(?:mismatch\w*|not in sync|out of sync)\b.{{0,40}}{_FM}", re.I),
    FM_ABSENT: re.compile(rf"{_FM}(?: package| service)? (?:is |was |were |has |had )?(?:not|never) (?:been )?installed"
                          rf"|\black of .{{0,20}}{_FM}|\b(?:no|without|missing) (?:the )?{_FM}"
                          rf"|\binstall(?:ing)? (?:the )?[`'\"]?(?:nvidia[- ]fabric ?manager|the fabric ?manager)", re.I),
    FM_NVLINK5: re.compile(r"\bNVLSM\b|\bNVLink ?5\b|\bmlx5_ib\b|\bib_umad\b", re.I),
    FM_NOTHING_TO_DO: re.compile(r"NV_WARN_NOTHING_TO_DO"),
}
_FABRIC_UNLESS = {FM_ABSENT: FM_VERSION, FM_NOTHING_TO_DO: FM_NVLINK5}  # a kind the other one explains


_fabric = kinds_told(_FABRIC, _FABRIC_UNLESS)


# distinguishing kinds an incident tells as a whole (its own words, all its lines together), never one
# line's codes: kind -> (the key's name, the test)
TOLD_BY_WORDS: dict[str, tuple[str, Callable[[dict[str, Any]], bool]]] = {
    NO_GPU: ("host", without_gpu),  # nothing to upgrade or drain: the job went where no GPU is
    PAST_VOCABULARY: ("index", past_vocabulary),  # a tokenizer the embedding lags behind, whatever the line
    SAVED_EMPTY: ("shapes", _empty_in(SAVED_EMPTY)),  # the save wrote the shards' placeholders
    LOADED_EMPTY: ("shapes", _empty_in(LOADED_EMPTY)),  # the model was sharded before it was loaded
    LFS_POINTER: ("fetched", _fetched(LFS_POINTER)),  # a Git LFS pointer where the file should be
    WEB_PAGE: ("fetched", _fetched(WEB_PAGE)),  # a web page saved as the file
    FM_VERSION: ("fabric-manager", _fabric(FM_VERSION)),  # not at the driver's version: it refuses to start
    FM_ABSENT: ("fabric-manager", _fabric(FM_ABSENT)),  # never installed
    FM_NVLINK5: ("fabric-manager", _fabric(FM_NVLINK5)),  # NVLink 5 without NVLSM or the InfiniBand modules
    FM_NOTHING_TO_DO: ("fabric-manager", _fabric(FM_NOTHING_TO_DO)),  # no NVSwitch found to manage
    **AFTERMATH,  # what followed a time limit, what heat did
    **CAUSES,  # what zeroed a loss, ranks given uneven batches
}
