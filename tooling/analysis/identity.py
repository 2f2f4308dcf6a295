"""What failure an incident is, as evidence a person can check: the key repeats are grouped by.

Each incident has one primary failure mode, taken from its strongest evidence (see
:mod:`tooling.failures.evidence`: its ``failure_mode``, the first signature recognised as a
cause, a description that names one cause, and only then consequences and catch-alls).

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

from dataclasses import dataclass, field
from typing import Any

from tooling.analysis.incidents import IncidentView, where_of
from tooling.failures.catalogue import FailureMode
from tooling.failures.evidence import primary
from tooling.failures.codes import line_words, shown_identifying
from tooling.failures.recognise import Recognition
from tooling.failures.signatures import is_progress, looks_like_an_error
from tooling.records.load import no_collection

MIN_TOKENS = 3  # fewer informative tokens ("error", "failed") are too weak to group by
MAX_TOKENS = 10


@dataclass(frozen=True)
class Identity:
    key: tuple[str, ...] | None
    mode: FailureMode | None  # the primary failure mode, if any evidence names one
    recognised: tuple[Recognition, ...] = field(default=(), compare=False, repr=False)  # the signatures'
    evidence: str = ""  # "failure mode gpu.hbm-ecc", "error 'x y z'", ""

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
    kept = tuple(recognised)  # their codes are read only for explanations
    if mode is not None and not mode.generic:
        key = _mode_key(mode, found.line, [*recognised, *found.said], where_of(data))
        if key is not None:
            return Identity(key, mode, kept, f"failure mode {mode.id}")
    # a line a mode explains is not a fingerprint of anything else (a watchdog line reads the
    # same whatever stalled the collective)
    errors = [s for s, r in zip(lines, recognised) if looks_like_an_error(s) and not is_progress(s)
              and (r.mode is None or r.mode.generic)]
    words = fingerprint(errors[0]) if errors else ""
    if len(words.split()) >= MIN_TOKENS:
        return Identity(("text", words), mode, kept, f"error '{words}'")
    return Identity(None, mode, kept)


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
