"""What failure an incident is, as evidence a person can check: the key repeats are grouped by.

One key per incident, from its strongest evidence:

1. its ``failure_mode`` (set by a person, an import or a scan), or else the failure mode its
   verbatim signatures are recognised as, together with the codes that tell failures of that
   mode apart (an exception for a software bug; nothing for a GPU that fell off the bus);
2. for a signature no specific mode explains (a software bug, a line the catalogue does not
   know): the words of its message, compared token-wise, without the noise that varies from
   one occurrence to the next (numbers, hosts, paths, ranks, timestamps) and without the
   exception class or log prefix around it, so ``AssertionError: x y z`` meets ``x y z``;
3. nothing: paraphrases (keywords, titles) only suggest, they never decide.

Neither layer nor symptom is part of a key: an incident filed with layer ``unknown`` meets
the same failure once it is diagnosed. An incident with two different signatures still has one
key (its primary failure), so it never glues two unrelated groups together.
"""
from __future__ import annotations

from dataclasses import dataclass

from tooling.analysis.incidents import IncidentView
from tooling.failures.catalogue import FailureMode, catalogue
from tooling.failures.codes import codes, message_words
from tooling.failures.recognise import Recognition, choose, recognise
from tooling.failures.signatures import is_boilerplate, looks_like_an_error, without_prefix

MIN_WORDS = 3  # a message of fewer informative words ("error", "failed") is too weak to group by


@dataclass(frozen=True)
class Identity:
    key: tuple[str, ...] | None
    mode: FailureMode | None  # specific or generic; None when nothing recognised it
    codes: tuple[str, ...] = ()  # every code its signatures carry, for explanations
    evidence: str = ""  # "failure mode gpu.hbm-ecc", "error 'x y z'", ""


def fingerprint(signature: str) -> str:
    """The informative words of a signature's message, without what varies between occurrences."""
    found = codes(signature)
    if found.exception:  # the message after the exception class, whatever prefix the line had
        return found.exception[0].split(": ", 1)[1] if ": " in found.exception[0] else ""
    return message_words(without_prefix(signature))


def identify(view: IncidentView) -> Identity:
    signatures = [s for s in map(str, view.data.get("signatures", [])) if not is_boilerplate(s)]
    recognised = [recognise(s) for s in signatures]
    seen = choose(recognised) if signatures else None
    explicit = view.data.get("failure_mode")
    mode = catalogue().get(explicit) if isinstance(explicit, str) else (seen.mode if seen else None)
    all_codes = tuple(dict.fromkeys(c for r in recognised for c in r.codes.all))
    if mode is not None and not mode.generic:
        extra = _distinguishing(mode, recognised)
        if mode.distinguish and not extra and _requires_codes(mode):
            mode = None  # cannot tell this mode's failures apart without codes: fall through
        else:
            return Identity(("mode", mode.id, *extra), mode, all_codes, f"failure mode {mode.id}")
    errors = [s for s in signatures if looks_like_an_error(s)]
    words = fingerprint(errors[0]) if errors else ""  # the first error line is the primary one
    if len(words.split()) >= MIN_WORDS or (words and _has_code(seen)):
        return Identity(("text", words), mode, all_codes, f"error '{words}'")
    return Identity(None, mode, all_codes)


def _distinguishing(mode: FailureMode, recognised: list[Recognition]) -> tuple[str, ...]:
    """The first code of each distinguishing kind found in any signature."""
    found: list[str] = []
    for kind in mode.distinguish:
        values = [v for r in recognised for v in r.codes.of(kind)]
        if values:
            found.append(f"{kind}={values[0].split(': ', 1)[-1] if kind == 'exception' else values[0]}")
    return tuple(found)


def _requires_codes(mode: FailureMode) -> bool:
    """A mode whose failures differ by a code that is missing: its records must not all merge."""
    return "exception" in mode.distinguish


def _has_code(seen: Recognition | None) -> bool:
    return bool(seen and (seen.codes.cuda or seen.codes.nccl or seen.codes.xid or seen.codes.errno))
