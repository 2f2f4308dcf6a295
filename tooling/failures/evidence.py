"""The primary failure of one incident record, from its strongest evidence.

In this order: its ``failure_mode``; the first of its verbatim signatures (in the order written,
progress lines last) recognised as a specific mode that is a cause, not a consequence; a mode
its description names unambiguously (one cause only, or else one consequence only); and only
then its ``failure_mode`` or signatures when they name a consequence (a collective timeout after
a rank died) or a catch-all. Repeat grouping (:mod:`tooling.analysis.identity`) and validate's
suggestions (:mod:`tooling.records.modes`) both start here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tooling.failures.catalogue import FailureMode, catalogue
from tooling.failures.recognise import Recognition, recognise, suggest
from tooling.failures.signatures import is_boilerplate, is_progress


@dataclass
class Evidence:
    lines: list[str]  # the signatures, without boilerplate
    recognised: list[Recognition]  # one per line
    mode: FailureMode | None = None  # the primary failure mode
    line: str | None = None  # the signature that shows it, if one does
    source: str = ""  # "failure_mode", "signatures", "description" or ""
    said: list[Recognition] = field(default_factory=list)  # codes quoted in the description, if it decided


def primary(data: dict[str, Any]) -> Evidence:
    lines = [s for s in map(str, data.get("signatures", [])) if not is_boilerplate(s)]
    found = Evidence(lines, [recognise(s) for s in lines])
    explicit = catalogue().get(str(data.get("failure_mode")))
    shown = sorted(((m, line) for r, line in zip(found.recognised, lines) if (m := r.mode) is not None),
                   key=lambda pair: is_progress(pair[1]))
    causes = [(m, line) for m, line in shown if not (m.downstream or m.generic)]
    if explicit is not None and not (explicit.downstream or explicit.generic):
        return _chosen(found, explicit, shown, "failure_mode")
    if causes:
        found.mode, found.line, found.source = causes[0][0], causes[0][1], "signatures"
        return found
    described, said = described_mode(data)
    # a description names the failure unless it needs codes to tell its failures apart, does not
    # quote them, and a signature or the failure_mode still says something
    if described is not None and (told_apart(described, said) or not (shown or explicit)):
        found.mode, found.source, found.said = described, "description", [said]
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


def described_mode(data: dict[str, Any]) -> tuple[FailureMode | None, Recognition]:
    """The one failure mode the description names, when it names exactly one cause, and the
    codes the description quotes ("unhandled system error", "completion error 12")."""
    # the notes are left out: they weigh hypotheses ("IOMMU settings did not help")
    text = " ".join([str(data.get("title", "")), *map(str, data.get("keywords", [])),
                     str(data.get("root_cause", ""))])
    said = Recognition(None, text=text)  # its codes are read only if asked for (told_apart)
    named = [m for m in suggest(text) if not m.generic]
    causes = [m for m in named if not m.downstream]  # "nodes went down with ECC errors": ECC is the failure
    chosen = (causes[0] if len(causes) == 1 else None) if causes else (named[0] if len(named) == 1 else None)
    # "a spike that never recovered; diverged" names two modes: ambiguous, so neither
    return chosen, said


def told_apart(mode: FailureMode, said: Recognition) -> bool:
    """Whether a description alone can say which failure of ``mode`` it is: always, unless the
    mode's failures differ by their words (``message``) and the description quotes no code."""
    if "message" not in mode.distinguish:
        return True
    return any(said.codes.of(k) for k in mode.distinguish if k != "message")
