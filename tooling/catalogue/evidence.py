"""The primary failure of one incident record, from its strongest evidence.

In this order: its ``failure_mode``; the first of its verbatim signatures (in the order written,
progress lines last) recognised as a specific mode that is a cause, not a consequence; a mode
its description names unambiguously (one cause only, or else one consequence only); and only
then its ``failure_mode`` or signatures when they name a consequence (a collective timeout after
a rank died) or a catch-all. A mode chosen so gives way to a particular failure of it
(``refines``) that another signature or the description names: "ncclRemoteError" with a link
that flapped is the flapping link. Repeat grouping (:mod:`tooling.analysis.identity`) and
validate's suggestions (:mod:`tooling.rules.mode_rules`) both start here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from tooling.catalogue.modes import FailureMode, catalogue
from tooling.catalogue.recognise import Recognition, affirmed, coded, recognise, recogniser, suggest_counted
from tooling.catalogue.signatures import is_boilerplate, is_progress


@dataclass
class Evidence:
    lines: list[str]  # the signatures, without boilerplate
    recognised: list[Recognition]  # one per line
    mode: FailureMode | None = None  # the primary failure mode
    line: str | None = None  # the signature that shows it, if one does
    source: str = ""  # "failure_mode", "signatures", "description" or ""
    said: list[Recognition] = field(default_factory=list)  # codes quoted in the description, if it decided
    among: int = 0  # how many failure modes the description named, if it decided
    narrowed: str = ""  # the coarser mode this one is a particular failure of, if evidence narrowed it


def primary(data: dict[str, Any]) -> Evidence:
    lines = [s for s in map(str, data.get("signatures", [])) if not is_boilerplate(s)]
    found = Evidence(lines, [recognise(s) for s in lines])
    explicit = catalogue().get(str(data.get("failure_mode")))
    shown = [(m, line) for r, line in zip(found.recognised, lines) if (m := stated_cause(line) or r.mode)]
    if len(shown) > 1:  # progress lines last (a stable sort); one line needs neither the sort nor the test
        shown.sort(key=lambda pair: is_progress(pair[1]))
    causes = [(m, line) for m, line in shown if not (m.downstream or m.generic)]
    if explicit is not None and not (explicit.downstream or explicit.generic):
        return _narrowed(_chosen(found, explicit, shown, "failure_mode"), shown, data)
    if causes:
        found.mode, found.line, found.source = causes[0][0], causes[0][1], "signatures"
        return _ended(_narrowed(found, shown, data), data)
    alone = not (shown or explicit)
    described, said, among = described_mode(data, alone=alone)
    # a description names the failure unless it needs codes to tell its failures apart, does not
    # quote them, and a signature or the failure_mode still says something
    if described is not None and (told_apart(described, said) or alone):
        found.mode, found.source, found.said, found.among = described, "description", [said], among
        return found
    if explicit is not None:
        return _chosen(found, explicit, shown, "failure_mode")
    if shown:
        found.mode, found.line, found.source = shown[0][0], shown[0][1], "signatures"
    return found


def _chosen(found: Evidence, mode: FailureMode, shown: list[tuple[FailureMode, str]], source: str) -> Evidence:
    found.mode, found.source = mode, source
    found.line = next((line for m, line in shown if m is mode), None)
    return found


def _narrowed(found: Evidence, shown: list[tuple[FailureMode, str]], data: dict[str, Any]) -> Evidence:
    """The chosen mode, or the particular failure of it that a signature or else the description
    names. The description is read only for a mode something refines: most modes are final."""
    modes = catalogue()
    if found.mode is None or found.mode.id not in modes.refined:
        return found
    coarse = found.mode
    narrower = modes.narrowest(coarse, [m for m, _ in shown])
    if narrower is not coarse:
        found.narrowed = coarse.id
        return _chosen(found, narrower, shown, "signatures")
    narrower = modes.narrowest(coarse, named_modes(description(data)))
    if narrower is not coarse:
        found.mode, found.line, found.source, found.narrowed = narrower, None, "description", coarse.id
    return found


def _ended(found: Evidence, data: dict[str, Any]) -> Evidence:
    """A signature's mode that is how another failure ends (a NaN, of a divergence) gives way to
    that failure where the description names it: "spike, then divergence" with a NaN line was the
    divergence, whose handling (a rollback) is not the NaN's."""
    assert found.mode is not None
    if not found.mode.end_of:
        return found
    ended = next((m for m in named_modes(description(data)) if m.id in found.mode.end_of), None)
    if ended is not None:
        found.mode, found.line, found.source = ended, None, "description"
    return found


def described_mode(data: dict[str, Any], *, alone: bool = False) -> tuple[FailureMode | None, Recognition, int]:
    """The one failure mode the description names, when it names one cause, the codes the
    description quotes ("unhandled system error", "completion error 12") and how many modes it
    named. When the description is ``alone`` (no signature or ``failure_mode`` says anything),
    one of several causes it names by more of its keywords than any other, or as many as another
    but alone of the layer the record was filed under, is still the best reading of it."""
    text = description(data)
    said = Recognition(None, text=text)  # its codes are read only if asked for (told_apart)
    if (stated := stated_cause(*_fields(data))) is not None:
        return stated, said, 1
    named = _named(text)
    # "nodes went down with ECC errors": ECC is the failure, the nodes going down its consequence
    causes = [(m, n) for m, n in named if not m.downstream] or named
    # of consequences alone, one that says why the process died (a collective timed out) before one
    # that says only that it died (aborted): nothing handles the latter but a person
    causes = [(m, n) for m, n in causes if not _only_died(m)] or causes
    if len(causes) == 1 or (alone and causes):
        ranked = sorted(causes, key=lambda pair: -pair[1])
        # "a spike that never recovered; diverged" names two modes as much: ambiguous, so neither
        if len(ranked) == 1 or ranked[0][1] > ranked[1][1]:
            return ranked[0][0], said, len(causes)
        # unless the layer the record was filed under is the layer of one of them only: "checkpoints
        # filled the local disk" filed under storage is the full disk, not a failing SSD
        tied = [m for m, n in ranked if n == ranked[0][1] and m.layer == data.get("layer")]
        if len(tied) == 1:
            return tied[0], said, len(causes)
        # or else the title names one of them only: a title says what happened ("nodes lose power"),
        # a keyword may say what was done about it ("unplanned maintenance notice")
        titled = [m for m, n in ranked if n == ranked[0][1] and m in named_modes(str(data.get("title", "")))]
        if len(titled) == 1:
            return titled[0], said, len(causes)
    return None, said, len(causes)


# the reason given for what a text tells: the clause after "due to" and its kin ("preempted due to
# node failure", "runs hit by a node failure are requeued"), or a parenthesis that holds one clause
# ("job preempted (node failure)"; not a list: "nodes come up dirty (bad GPU state, hangs)")
_REASON = re.compile(r"\b(?:due to|because of|caused by|owing to|as a result of|hit by)\b([^().;,\n]{3,80})"
                     r"|\(([^().;,\n]{3,80})\)", re.IGNORECASE)


@lru_cache(maxsize=1 << 16)  # by text: signatures repeat across incidents (cleared with the catalogue)
def stated_cause(*texts: str) -> FailureMode | None:
    """The failure texts give as the reason for another they name: one mode named in the clause
    after 'due to', 'because of', 'caused by' or inside parentheses, where the texts name another
    mode too (a preemption for a node failure is the node failure). Each text is read on its own:
    a clause ends with its text (a title, one keyword)."""
    clauses = ("".join(pair) for text in texts for pair in _REASON.findall(text))
    reasons = {m.id: m for clause in clauses if len(found := named_modes(clause)) == 1 for m in found}
    if len(reasons) != 1:
        return None
    (cause,) = reasons.values()
    return cause if any(m is not cause for m in named_modes(" ".join(texts))) else None


def _only_died(mode: FailureMode) -> bool:
    return mode.downstream and mode.automation == "runbook-first"


def description(data: dict[str, Any]) -> str:
    """An incident's own words for what happened: its title, keywords and root cause."""
    # each field its own clause: a keyword that clears something ("no scheduled maintenance")
    # clears its own field, not the keywords written after it
    return "; ".join(_fields(data))


def _fields(data: dict[str, Any]) -> list[str]:
    # the notes are left out: they weigh hypotheses ("IOMMU settings did not help")
    return [str(data.get("title", "")), *map(str, data.get("keywords", [])), str(data.get("root_cause", ""))]


def named_modes(text: str) -> list[FailureMode]:
    """The specific modes a description names, by their keywords, by a code it quotes ("killed,
    exit code 137") or by an error message it quotes, without those a more particular named one
    refines ("a flapping IB link broke NCCL's connections" is the flapping link, not any network
    error)."""
    return [mode for mode, _ in _named(text)]


@lru_cache(maxsize=1 << 16)  # by text: the clauses stated_cause reads come again (cleared with the catalogue)
def _named(text: str) -> tuple[tuple[FailureMode, int], ...]:
    """:func:`named_modes`, in catalogue order, each with how many keywords and codes name it."""
    modes = catalogue()
    named: dict[str, list] = {m.id: [m, n] for m, n in suggest_counted(text) if not m.generic}  # type: ignore[type-arg]
    for mode in coded(text):
        named.setdefault(mode.id, [mode, 0])[1] += 1
    # an error message quoted among the words names its mode ("received 0 items of ancdata"), as
    # much as one keyword: where the words already name that mode, the quote adds nothing (read
    # past recognise's cache of line shapes: a description's words seldom come twice)
    quoted = recogniser().line(affirmed(text)).mode
    if quoted is not None and not quoted.generic:
        named.setdefault(quoted.id, [quoted, 1])
    pairs = tuple(sorted(((m, n) for m, n in named.values()), key=lambda pair: modes.rank(pair[0])))
    if not modes.refined.intersection(named):
        return pairs
    return tuple((m, n) for m, n in pairs if not any(modes.narrows(o, m) for o, _ in pairs))


def routine_mode(data: dict[str, Any], recognised: list[Recognition]) -> FailureMode | None:
    """The mode whose routine message (``routine``: an fp16 overflow that skips one step) a record
    shows, in its signatures (as they were recognised) or its description, where nothing else
    named its failure: a question about such messages, or a run that only printed them, is that
    routine message, not the failure it can precede."""
    shown = next((r.routine for r in recognised if r.routine is not None), None)
    return shown or recogniser().routine_of(description(data))


def told_apart(mode: FailureMode, said: Recognition) -> bool:
    """Whether a description alone can say which failure of ``mode`` it is: always, unless the
    mode's failures differ by their words (``message``) and the description quotes no code."""
    if "message" not in mode.distinguish:
        return True
    return any(said.codes.of(k) for k in mode.distinguish if k != "message")
