"""Ladders and incidents linked both ways, and the way in from an error's words.

No record says which ladder step an incident was found at, so it is read from the words both
already have. A failure mode's step on a ladder is the step whose name and "look for" name the
mode: a code the mode owns quoted there ("Xid 79"), else a line one of its recognisers matches,
else its keywords, else the first step that clears the mode's layer. An incident's ladder is its
symptom's (:func:`tooling.analysis.paging.ladder_for`); its step is the step that clears the layer
its cause sat in (the one its mode names, where several do), else its mode's step. The way in (the home page's lookup) goes from a mode to its ladder step and to the past
incidents of the mode: those identified as it, and those whose signatures show it (an HBM error
that ended in Xid 79 is an incident the GPU fell off the bus in, too).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from tooling.analysis.identity import Identity
from tooling.analysis.incidents import IncidentView
from tooling.analysis.paging import ladder_for
from tooling.catalogue.modes import FailureMode, catalogue
from tooling.catalogue.recognise import coded, recogniser, suggest
from tooling.records.model import Record

FIX_LENGTH = 200  # characters of an incident's actions shown as its fix in a list


@dataclass(frozen=True)
class Place:
    """A ladder, and the step on it (counted from 1, as its #step-N anchors) where one is known."""

    ladder: Record
    step: int | None

    @property
    def step_name(self) -> str:
        return str(self.ladder.data["steps"][self.step - 1]["name"]) if self.step else ""


@dataclass(frozen=True)
class PastIncident:
    """An incident as its ladder lists it: when, at which step, what fixed it, its postmortems."""

    view: IncidentView
    step: int | None
    fix: str  # its actions, shortened to FIX_LENGTH; "" when none are recorded
    postmortems: tuple[str, ...]


@dataclass(frozen=True)
class LadderPast:
    """A ladder's past incidents, newest first, and the same grouped by the step they name."""

    incidents: list[PastIncident]
    by_step: dict[int, list[PastIncident]]


@dataclass(frozen=True)
class Way:
    """The way in from one failure mode: its ladder step and its past incidents, newest first."""

    mode: FailureMode
    place: Place | None  # None: no ladder serves the mode's symptom yet
    incidents: list[IncidentView]


@dataclass(frozen=True)
class LadderLinks:
    places: dict[str, Place]  # incident id -> its ladder and step (absent: no ladder for its symptom)
    past: dict[str, LadderPast]  # ladder id -> its past incidents
    ways: list[Way]  # every failure mode of the catalogue, in its order
    seen: dict[str, list[FailureMode]]  # incident id -> the other modes its signatures show

    def signatures_of(self, mode: FailureMode) -> list[IncidentView]:
        """The incidents whose logged lines show ``mode`` though they were filed as another (or
        none), newest first: the failure-mode page lists them beside its count."""
        way = next((w for w in self.ways if w.mode.id == mode.id), None)
        return [] if way is None else [v for v in way.incidents
                                       if any(m.id == mode.id for m in self.seen.get(v.id, []))]

    def shown_with(self, ladders: dict[int, Record]) -> LadderLinks:
        """The same links to the ladders as an edition shows them (``ladders``: id() of each
        English record -> its translated record; tooling.site.overlays)."""
        def moved(place: Place | None) -> Place | None:
            return None if place is None else replace(place, ladder=ladders.get(id(place.ladder), place.ladder))

        places = {key: replace(place, ladder=ladders.get(id(place.ladder), place.ladder))
                  for key, place in self.places.items()}
        return LadderLinks(places, self.past, [replace(way, place=moved(way.place)) for way in self.ways], self.seen)


def link_ladders(ladders: list[Record], incidents: list[IncidentView],
                 identities: dict[str, Identity]) -> LadderLinks:
    """Each incident's ladder step, each ladder's past incidents, each mode's way in."""
    places: dict[str, Place] = {}
    for view in incidents:
        ladder = ladder_for(str(view.data["symptom"]), ladders)
        if ladder is not None:
            places[view.id] = Place(ladder, incident_step(identities[view.id].mode, str(view.data["layer"]), ladder))
    newest = sorted(incidents, key=lambda v: (v.detected, v.id), reverse=True)
    past = {ladder.id: _ladder_past([_past(v, places[v.id]) for v in newest
                                     if v.id in places and places[v.id].ladder is ladder]) for ladder in ladders}
    seen = {v.id: list({id(r.mode): r.mode for r in identities[v.id].recognised
                        if r.mode is not None and r.mode is not identities[v.id].mode}.values()) for v in incidents}
    shown = _by_mode(newest, identities)
    return LadderLinks(places, past, [_way(mode, ladders, shown.get(id(mode), [])) for mode in catalogue().modes],
                       seen)


def _past(view: IncidentView, place: Place) -> PastIncident:
    actions = "; ".join(str(a).strip().rstrip(".") for a in view.data.get("actions", []))
    return PastIncident(view, place.step, shorten(actions + "." if actions else "", FIX_LENGTH),
                        tuple(view.postmortems))


def _ladder_past(incidents: list[PastIncident]) -> LadderPast:
    by_step: dict[int, list[PastIncident]] = {}
    for incident in incidents:
        if incident.step is not None:
            by_step.setdefault(incident.step, []).append(incident)
    return LadderPast(incidents, by_step)


def _by_mode(newest: list[IncidentView], identities: dict[str, Identity]) -> dict[int, list[IncidentView]]:
    """The incidents each mode (by id()) is the failure or a recognised signature of, newest
    first: one pass over the incidents, not one per mode of the catalogue."""
    shown: dict[int, list[IncidentView]] = {}
    for view in newest:
        identity = identities[view.id]
        modes = {id(m): m for m in (identity.mode, *(r.mode for r in identity.recognised)) if m is not None}
        for key in modes:
            shown.setdefault(key, []).append(view)
    return shown


def _way(mode: FailureMode, ladders: list[Record], shown: list[IncidentView]) -> Way:
    ladder = ladder_for(mode.symptom, ladders)
    place = Place(ladder, mode_step(mode, ladder)) if ladder is not None else None
    return Way(mode, place, shown)


def shorten(text: str, limit: int) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters, an ellipsis marking the cut."""
    if len(text) <= limit:
        return text
    return text[:limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def mode_step(mode: FailureMode, ladder: Record) -> int | None:
    """The step of ``ladder`` that finds ``mode`` (see the module's docstring), None if none does."""
    named = _named(_texts(ladder.data)).get(mode.id, {})
    return min(named, key=lambda step: (named[step], step), default=None)


def incident_step(mode: FailureMode | None, layer: str, ladder: Record) -> int | None:
    """The step of ``ladder`` an incident of ``mode`` whose cause sat in ``layer`` names: of the
    steps that clear its layer, the one its mode's words name most strongly (the first of them if
    none does); where no step clears its layer, its mode's step."""
    texts = _texts(ladder.data)
    clearing = [number for number, (_, clears) in enumerate(texts, 1) if clears == layer]
    named = _named(texts).get(mode.id, {}) if mode is not None else {}
    if clearing:
        return min(clearing, key=lambda step: (named.get(step, len(RANKS)), step))
    return mode_step(mode, ladder) if mode is not None else None


RANKS = ("code", "recogniser", "keyword", "layer")  # how a step's words name a mode, strongest first


def _texts(data: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    # a ladder without steps (a draft, a record the schema refuses) is a ladder no step names
    return tuple((f"{s['name']}. {s['look_for']}", str(s["clears"])) for s in data.get("steps") or [])


@lru_cache(maxsize=64)
def _named(steps: tuple[tuple[str, str], ...]) -> dict[str, dict[int, int]]:
    """Mode id -> {step: how strongly it names the mode (an index of RANKS)} on a ladder of these
    steps ((words, layer cleared) each); cached by the steps' words."""
    found = recogniser()
    named: dict[str, dict[int, int]] = {}
    for number, (text, clears) in enumerate(steps, 1):
        ranked = [(0, m.id) for m in coded(text)]
        ranked += [(1, found.owner[i][0].id) for i in found.lines.matching(text) if i < len(found.owner)]
        ranked += [(2, m.id) for m in suggest(text)]
        ranked += [(3, m.id) for m in found.catalogue.modes if m.layer == clears]
        for rank, mode_id in ranked:
            steps_of = named.setdefault(mode_id, {})
            steps_of[number] = min(rank, steps_of.get(number, rank))
    return named
