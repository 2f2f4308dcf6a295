"""What failure an incident is, as evidence a person can check: the key repeats are grouped by.

Each incident has one primary failure mode, taken from its strongest evidence (see
:mod:`tooling.catalogue.evidence`: its ``failure_mode``, the first signature recognised as a
cause, a description that names one cause, and only then consequences and catch-alls).

The key is that mode with the codes that tell its failures apart (``distinguish``): nothing
for a GPU that fell off the bus (every one is the same failure), the exception for a software
bug, the log line's own words and codes for a mode that names a symptom whose causes differ (a
divergence, a watchdog timeout). A line that says no more than its mode ("died with
<Signals.SIGSEGV: 11>", a launcher's "failed (exitcode: -11)") tells no failure apart; then, and
for a consequence whose line reads the same whatever the cause, the phase of the run it struck
(saving a checkpoint, evaluating: :mod:`tooling.catalogue.phases`) does, if the incident names
one: a watchdog timeout while saving is the save outlasting the timeout in any run, while a
consequence with no phase named meets only its own run's. Without a mode, the key is the words and codes of the first
error line, without the noise that varies between occurrences (numbers, hosts, paths, ranks,
times), its log prefix and its exception class, so ``AssertionError: x y z`` meets ``x y z``.
A record whose only failure words are a routine message the catalogue says recovers on its own
(``routine``: an fp16 overflow that skipped a step) has that message as its key, never the failure
it can precede: questions about such messages meet each other, not the runs that failed.
Neither layer nor symptom is part of a key, so an incident filed with layer ``unknown`` meets
the same failure once diagnosed, and an incident with two signatures has still one key.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from tooling.analysis.incidents import IncidentView, where_of
from tooling.analysis.similarity import STOP_WORDS
from tooling.catalogue.codes import line_words, shown_identifying
from tooling.catalogue.evidence import primary, routine_mode
from tooling.catalogue.modes import FailureMode, catalogue
from tooling.catalogue.distinguish import told_by_words
from tooling.catalogue.phases import SAVING, named_phase, phase_of
from tooling.catalogue.recognise import CODE_LABELS, Recognition
from tooling.catalogue.signatures import is_progress, looks_like_an_error
from tooling.messages import N_, Message, message
from tooling.records.load import no_collection

MIN_TOKENS = 3  # fewer informative tokens ("error", "failed") are too weak to group by
MAX_TOKENS = 10
MIN_OWN_TOKENS = 2  # words beyond what the mode itself says: fewer name no particular failure

# What a key is, as a person checks it; ``codes`` (" (Xid 63, Xid 79)") is added where a group
# of them is explained (Identity.why).
BY_MODE = N_("failure mode %(mode)s%(codes)s")
BY_ERROR = N_("error '%(words)s'%(codes)s")
BY_ROUTINE = N_("routine message of %(mode)s, no failure by itself%(codes)s")
SAME = {BY_MODE: N_("same failure mode %(mode)s%(codes)s"), BY_ERROR: N_("same error '%(words)s'%(codes)s"),
        BY_ROUTINE: N_("same routine message of %(mode)s%(codes)s")}


@dataclass(frozen=True)
class Identity:
    key: tuple[str, ...] | None
    mode: FailureMode | None  # the primary failure mode, if any evidence names one
    recognised: tuple[Recognition, ...] = field(default=(), compare=False, repr=False)  # the signatures'

    @property
    def evidence(self) -> Message | None:
        """The key as a person checks it: "failure mode gpu.hbm-ecc", "error 'x y z'"; None without
        one. Said only when asked (a group's reasons), not for each of 100,000 incidents."""
        if self.key is None:
            return None
        if self.key[0] in ("mode", "routine"):
            return message(BY_MODE if self.key[0] == "mode" else BY_ROUTINE, mode=self.key[1], codes="")
        return message(BY_ERROR, words=self.key[1], codes="")

    def why(self, codes: list[str]) -> Message | None:
        """The evidence with the codes a group's members carry: "failure mode gpu.hbm-ecc (Xid 79)"."""
        evidence = self.evidence
        return evidence.with_values(codes=f" ({', '.join(codes)})") if evidence and codes else evidence

    @property
    def same(self) -> Message | None:
        """The evidence as said of an earlier incident with the same key ("same failure mode x")."""
        evidence = self.evidence
        return None if evidence is None else Message(SAME[evidence.msgid], evidence.values)

    @property
    def codes(self) -> tuple[str, ...]:
        """Every code the signatures carry, for explanations: read only when one is written,
        since extracting every code of every line is most of what identifying would cost."""
        return tuple(dict.fromkeys(c for r in self.recognised for c in r.codes.all))

    @property
    def naming_codes(self) -> tuple[str, ...]:
        """The codes that name a failure by themselves ("Xid 79", "errno 28 (ENOSPC)", "exit 137"),
        kept from recognising the signatures: cheap enough for every member of a large group."""
        return tuple(dict.fromkeys(c for r in self.recognised for c in shown_identifying(r.identifying)))


def fingerprint(line: str) -> str:
    """The informative words and codes of an error line, without what varies between occurrences."""
    return line_words(line, limit=MAX_TOKENS)


def identify(view: IncidentView) -> Identity:
    return identify_data(view.data)


def identify_all(views: list[IncidentView]) -> dict[str, Identity]:
    """Incident id -> identity. Made with the collector off: identities hold no cycles, and on
    100,000 incidents its passes over every live object cost a quarter of the time."""
    with no_collection():
        return {v.id: identify(v) for v in views}


def identify_data(data: dict[str, Any]) -> Identity:
    """The identity of an incident's fields, filed or about to be (tooling watch matches a
    recurring failure to its open incident by it)."""
    found = primary(data)
    mode, lines, recognised = found.mode, found.lines, found.recognised
    if mode is not None and mode.after_start and named_phase(data) is not None:
        mode = catalogue().by_id[mode.after_start]  # type: ignore[attr-defined]  # the run was under way
    kept = tuple(recognised)  # their codes are read only for explanations
    if mode is not None and not mode.generic:
        via = next((r.via for s, r in zip(lines, recognised) if s == found.line and r.mode is mode), "") \
            if found.line is not None and "message" in mode.distinguish else ""
        key = _mode_key(mode, found.line, via, [*recognised, *found.said], data)
        if key is not None:
            return Identity(key, mode, kept)
    # a line a mode explains is not a fingerprint of anything else (a watchdog line reads the
    # same whatever stalled the collective)
    # nor is a routine message (an overflow that skipped a step): the error after it is the failure
    error = next((s for s, r in zip(lines, recognised) if (r.mode is None or r.mode.generic) and r.routine is None
                  and looks_like_an_error(s) and not is_progress(s)), None)  # the cheap tests first
    words = fingerprint(error) if error is not None else ""
    if len(words.split()) >= MIN_TOKENS:
        return Identity(("text", words), mode, kept)
    if mode is None or mode.generic:  # only a routine message ("gradient overflow, skipping step"): that, no failure
        routine = routine_mode(data, recognised)
        if routine is not None:
            return Identity(("routine", routine.id), mode, kept)
    return Identity(None, mode, kept)


def _mode_key(mode: FailureMode, line: str | None, via: str, recognised: list[Recognition],
              data: dict[str, Any]) -> tuple[str, ...] | None:
    """The mode with its distinguishing codes; None when a needed one is missing.

    The first of the codes named in ``distinguish`` that the lines carry comes first; ``message``
    (the line's own words) only when none of them is there: a code says more than the words around it. Where the line
    cannot tell which failure of the mode it was, or the mode is a consequence whose line reads
    the same whatever the cause, the phase of the run it struck tells (see
    :mod:`tooling.catalogue.phases`).
    """
    extra: list[str] = []
    if "saving" in mode.distinguish and phase_of(data, mode) == SAVING:
        extra.append(f"phase={SAVING}")  # the save's own footprint, not the run's
    told = told_by_words()
    extra += [f"{name}={kind}" for kind, (name, says) in told.items() if kind in mode.distinguish and says(data)]
    for kind in (k for k in mode.distinguish if k != "message" and k not in told):  # "saving": Codes.of
        values = [v for r in recognised for v in r.codes.of(kind)]
        if values:
            extra.append(f"{kind}={values[0].split(': ', 1)[-1] if kind == 'exception' else values[0]}")
            break  # the first the lines carry tells it: a CUDA error's name says more than its exception's words
        if kind == "exception":
            return None  # two bugs are the same only when their exceptions (or a code before them) say so
    if "message" in mode.distinguish and not extra:
        # a consequence's phase comes before its words: they are read only where it names none
        when = phase_of(data, mode) if mode.downstream else None
        words = "" if when else _telling_words(mode, line, via)
        if not (words or mode.downstream):
            when = phase_of(data, mode)
        if when is None and not words:
            return None  # a symptom without the line or the phase that tells its cause: nothing to group by
        extra.append(f"phase={when}" if when else f"message={words}")
        if mode.downstream and not when:  # a consequence reads the same whatever the cause: the same run at least
            extra.append(f"scope={where_of(data)}")
    return ("mode", mode.id, *extra)


def _telling_words(mode: FailureMode, line: str | None, via: str) -> str:
    """The line's :func:`fingerprint` where it tells which failure of ``mode`` it was, else ""."""
    words = fingerprint(line) if line and not is_progress(line) else ""
    return words if len(words.split()) >= MIN_TOKENS and _tells_apart(mode, words, via) else ""


@lru_cache(maxsize=None)
def _own_words(mode_id: str) -> frozenset[str]:
    """The words the catalogue describes a mode with: a line of the mode says them by being one
    (cached by id: hashing a mode hashes every field of it)."""
    mode = catalogue().by_id[mode_id]  # type: ignore[attr-defined]
    return frozenset(re.findall(r"[a-z][a-z0-9_]*", f"{mode.title} {mode.summary}".lower()))


def _tells_apart(mode: FailureMode, words: str, via: str) -> bool:
    """Whether a line (its :func:`fingerprint`) says more than its mode: "died with
    <Signals.SIGSEGV: 11>" is any segfault at all (a rank "died on SIGSEGV"), so two such lines
    are two undiagnosed crashes, not one failure seen twice; "NCCL WARN Cuda failure 'out of
    memory'" names which CUDA failure. A line whose code alone named the mode ("failed
    (exitcode: -11) local_rank: 3") is a launcher reporting that code: its other words are the
    launcher's, the same for every failure."""
    if via.split(" ", 1)[0] in CODE_LABELS:
        return False
    own = _own_words(mode.id)
    rest = [w for w in words.split() if w not in STOP_WORDS and w not in own]
    return len(rest) >= MIN_OWN_TOKENS
