"""What the analysis derives from one record file alone, kept with the file's check.

An incident's identity (:mod:`tooling.analysis.identity`), the words its text is indexed by
(:func:`tooling.analysis.similarity.terms`), its normalised signatures and the codes that keep it apart
from incidents of its key (:mod:`tooling.analysis.coded`) depend on nothing but
its record and the code: over 100,000 incidents they were 40% of `tooling repeats`, recomputed for files unchanged since the
command before. So they are kept beside the file's check (:meth:`tooling.rules.validate.Checked.kept_of`:
the same key of path, mtime and size, the same fingerprint of the code, dropped with it), as
plain tuples and dicts: a failure mode by its id, a recognised signature by what it was made
of. Anything crossing incidents (groups, scores, suggestions) is computed every time.
"""
from __future__ import annotations

from sys import intern
from typing import Any, Callable, Protocol

from tooling.analysis.coded import coded
from tooling.analysis.identity import Identity, identify
from tooling.analysis.incidents import IncidentView
from tooling.analysis.similarity import terms
from tooling.catalogue.modes import catalogue
from tooling.catalogue.recognise import Recognition
from tooling.catalogue.signatures import normalise
from tooling.records.load import no_collection

IDENTITY, TERMS, SIGNATURES, CODES = "identity", "terms", "signatures", "codes"
Encoded = tuple[Any, ...]  # (mode id or None, via, text, identifying codes as pairs, routine mode id or None)


class Kept(Protocol):
    def kept_of(self, path: str, name: str) -> Any: ...

    def keep_of(self, path: str, name: str, value: Any) -> None: ...

    def kept_or_made(self, path: str, name: str, valid: Callable[[Any], bool], make: Callable[[], Any]) -> Any: ...


def kept_identities(views: list[IncidentView], kept: Kept) -> dict[str, Identity]:
    """:func:`~tooling.analysis.identity.identify_all`, reading each identity kept and keeping
    each one made."""
    with no_collection():
        decoder, encoded = _Decoder(), {}  # id(recognition) -> its coded form: one each, shared
        found = {}
        for view in views:
            path, identity = view.record.path, None
            stored = kept.kept_of(path, IDENTITY)
            if stored is not None:
                identity = decoder.identity(stored)
            if identity is None:
                identity = identify(view)
                kept.keep_of(path, IDENTITY, _coded(identity, encoded))
            found[view.id] = identity
        return found


def kept_terms(views: list[IncidentView], kept: Kept) -> dict[str, dict[str, int]]:
    """Incident id -> :func:`~tooling.analysis.similarity.terms`, kept as identities are."""
    return _kept_each(views, kept, TERMS, dict,
                      lambda view: {intern(t): c for t, c in terms(view).items()})  # one string each in the file


def kept_signatures(views: list[IncidentView], kept: Kept) -> dict[str, tuple[str, ...]]:
    """Incident id -> its signatures, :func:`~tooling.catalogue.signatures.normalise`-d (the
    candidates' most common one), kept as identities are."""
    return _kept_each(views, kept, SIGNATURES, tuple,
                      lambda view: tuple(intern(normalise(s)) for s in view.data.get("signatures", [])))


def kept_codes(kept: Kept) -> Callable[[IncidentView, Identity], dict[str, frozenset[str]]]:
    """:func:`~tooling.analysis.coded.coded` of an incident, kept as identities are: asked only of
    incidents whose key another incident has (grouping), so kept only for those."""
    def valid(value: Any) -> bool:  # what coded() returns: family -> the failures named, as a frozenset
        return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, frozenset) for k, v in value.items())
    return lambda view, identity: kept.kept_or_made(view.record.path, CODES, valid, lambda: coded(identity, view.data))


def _kept_each(views: list[IncidentView], kept: Kept, name: str, kind: type,
               make: Callable[[IncidentView], Any]) -> dict[str, Any]:
    """Incident id -> its value ``name``: the one kept where it is a ``kind``, else made and kept."""
    def valid(value: Any) -> bool:
        return isinstance(value, kind)
    return {view.id: kept.kept_or_made(view.record.path, name, valid, lambda: make(view)) for view in views}


def _coded(identity: Identity, encoded: dict[int, Encoded]) -> tuple[Any, ...]:
    recognised = tuple(encoded.get(id(r)) or encoded.setdefault(id(r), _recognition(r)) for r in identity.recognised)
    return identity.key, identity.mode.id if identity.mode else None, recognised


def _recognition(r: Recognition) -> Encoded:
    return (r.mode.id if r.mode else None, r.via, r.text, tuple(r.identifying.items()),
            r.routine.id if r.routine else None)


class _Decoder:
    """Coded identities back into identities; a recognition shared in the file is one again."""

    def __init__(self) -> None:
        self.modes = catalogue().by_id  # type: ignore[attr-defined]
        self.recognitions: dict[int, Recognition] = {}  # id(coded form) -> recognition; the forms live on

    def identity(self, coded: Any) -> Identity | None:
        """None for what no code of this version writes: made again."""
        try:
            key, mode, recognised = coded
            return Identity(key, self.modes[mode] if mode is not None else None,
                            tuple(map(self.recognition, recognised)))
        except (TypeError, ValueError, KeyError):
            return None

    def recognition(self, coded: Encoded) -> Recognition:
        found = self.recognitions.get(id(coded))
        if found is None:
            mode, via, text, identifying, routine = coded
            found = self.recognitions[id(coded)] = Recognition(
                self.modes[mode] if mode is not None else None, via=via, text=text, identified=dict(identifying),
                routine=self.modes[routine] if routine is not None else None)
        return found
