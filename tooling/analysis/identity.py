"""What failure an incident is, as evidence a person can check: the key repeats are grouped by.

Each incident has one primary failure mode, taken from its strongest evidence, in this order:
its ``failure_mode``; the first of its verbatim signatures (in the order written) recognised
as a specific mode; a mode its description names unambiguously (one mode only, and one that
is a cause, not a symptom); and only then modes that are usually the consequence of another
failure (``downstream``: a collective timeout after a rank died) or catch-alls.

The key is that mode with the codes that tell its failures apart (``distinguish``): nothing
for a GPU that fell off the bus (every one is the same failure), the exception for a software
bug, the log line's own words and codes for a mode that names a symptom whose causes differ (a
divergence, a watchdog timeout). Without a mode, the key is the words and codes of the first
error line, without the noise that varies between occurrences (numbers, hosts, paths, ranks,
times), its log prefix and its exception class, so ``AssertionError: x y z`` meets ``x y z``.
Neither layer nor symptom is part of a key, so an incident filed with layer ``unknown`` meets
the same failure once diagnosed, and an incident with two signatures has still one key.
"""
from __future__ import annotations

from dataclasses import dataclass

from tooling.analysis.incidents import IncidentView
from tooling.failures.catalogue import FailureMode, catalogue
from tooling.failures.codes import codes, line_words
from tooling.failures.recognise import Recognition, recognise, suggest
from tooling.failures.signatures import is_boilerplate, is_progress, looks_like_an_error

MIN_TOKENS = 3  # fewer informative tokens ("error", "failed") are too weak to group by
MAX_TOKENS = 10


@dataclass(frozen=True)
class Identity:
    key: tuple[str, ...] | None
    mode: FailureMode | None  # the primary failure mode, if any evidence names one
    codes: tuple[str, ...] = ()  # every code the signatures carry, for explanations
    evidence: str = ""  # "failure mode gpu.hbm-ecc", "error 'x y z'", ""


def fingerprint(line: str) -> str:
    """The informative words and codes of an error line, without what varies between occurrences."""
    return line_words(line, limit=MAX_TOKENS)


def identify(view: IncidentView) -> Identity:
    lines = [s for s in map(str, view.data.get("signatures", [])) if not is_boilerplate(s)]
    recognised = [recognise(s) for s in lines]
    mode, line, evidence = _primary(view, lines, recognised)
    all_codes = tuple(dict.fromkeys(c for r in recognised for c in r.codes.all))
    if mode is not None and not mode.generic:
        key = _mode_key(mode, line, evidence, view.where)
        if key is not None:
            return Identity(key, mode, all_codes, f"failure mode {mode.id}")
    # a line a mode explains is not a fingerprint of anything else (a watchdog line reads the
    # same whatever stalled the collective)
    errors = [s for s, r in zip(lines, recognised) if looks_like_an_error(s) and not is_progress(s)
              and (r.mode is None or r.mode.generic)]
    words = fingerprint(errors[0]) if errors else ""
    if len(words.split()) >= MIN_TOKENS:
        return Identity(("text", words), mode, all_codes, f"error '{words}'")
    return Identity(None, mode, all_codes)


def _primary(view: IncidentView, lines: list[str],
             recognised: list[Recognition]) -> tuple[FailureMode | None, str | None, list[Recognition]]:
    """The incident's failure mode, the signature line that shows it (None if none does), and
    the recognitions whose codes tell its failures apart."""
    explicit = catalogue().get(str(view.data.get("failure_mode")))
    # a progress line ("iteration 7010 | lm loss: nan |") shows a mode but says little else: last
    shown = sorted(((m, line) for r, line in zip(recognised, lines) if (m := r.mode) is not None),
                   key=lambda pair: is_progress(pair[1]))
    causes = [(m, line) for m, line in shown if not (m.downstream or m.generic)]
    if explicit is not None and not (explicit.downstream or explicit.generic):
        return explicit, next((line for m, line in shown if m is explicit), None), recognised
    if causes:
        return causes[0][0], causes[0][1], recognised
    described, said = described_mode(view)
    if described is not None:  # codes quoted in the description tell its failures apart too
        return described, None, [*recognised, said]
    if explicit is not None:
        return explicit, next((line for m, line in shown if m is explicit), None), recognised
    return (shown[0][0], shown[0][1], recognised) if shown else (None, None, recognised)


def described_mode(view: IncidentView) -> tuple[FailureMode | None, Recognition]:
    """The one failure mode the description names, when it names exactly one cause, and the
    codes the description quotes ("unhandled system error", "completion error 12")."""
    # the notes are left out: they weigh hypotheses ("IOMMU settings did not help")
    text = " ".join([str(view.data.get("title", "")), *map(str, view.data.get("keywords", [])),
                     str(view.data.get("root_cause", ""))])
    said = Recognition(None, codes(text))
    named = [m for m in suggest(text) if not m.generic]
    causes = [m for m in named if not m.downstream]  # "nodes went down with ECC errors": ECC is the failure
    chosen = (causes[0] if len(causes) == 1 else None) if causes else (named[0] if len(named) == 1 else None)
    # "a spike that never recovered; diverged" names two modes: ambiguous, so neither
    return (chosen if chosen is not None and _told_apart(chosen, said) else None), said


def _told_apart(mode: FailureMode, said: Recognition) -> bool:
    """A description can stand for a mode whose failures differ only by a code it quotes."""
    if "message" not in mode.distinguish:
        return True
    return any(said.codes.of(k) for k in mode.distinguish if k != "message")


def _mode_key(mode: FailureMode, line: str | None, recognised: list[Recognition],
              scope: str) -> tuple[str, ...] | None:
    """The mode with its distinguishing codes; None when a needed one is missing.

    The codes named in ``distinguish`` come first; ``message`` (the line's own words) only
    when none of them is there: a code says more than the words around it.
    """
    extra: list[str] = []
    for kind in (k for k in mode.distinguish if k != "message"):
        values = [v for r in recognised for v in r.codes.of(kind)]
        if values:
            extra.append(f"{kind}={values[0].split(': ', 1)[-1] if kind == 'exception' else values[0]}")
        elif kind == "exception":
            return None  # two bugs are the same only when their exceptions say so
    if "message" in mode.distinguish and not extra:
        words = fingerprint(line) if line and not is_progress(line) else ""
        if len(words.split()) < MIN_TOKENS:
            return None  # a symptom without the line that tells its cause: nothing to group by
        extra.append(f"message={words}")
        if mode.downstream:  # a consequence reads the same whatever the cause: the same run at least
            extra.append(f"scope={scope}")
    return ("mode", mode.id, *extra)
