"""The 'Paged? Start here' map: each symptom, the ladder to walk for it and its latest incidents.

A symptom is listed when a ladder serves it (as its own symptom, or through ``also_for``) or when
incidents have it; the most frequent symptoms come first, since they are the likeliest page.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from tooling.analysis.incidents import IncidentView
from tooling.records.model import Record
from tooling.records.schema import field_spec
from tooling.rules.crossref import ladder_symptoms

RECENT = 3  # incidents shown per symptom: enough to recognise a repeat, short enough to scan


@dataclass(frozen=True)
class PagedSymptom:
    symptom: str
    meaning: str  # the schema's gloss: 'processes died'
    ladder: Record | None  # None: incidents but no ladder yet (validate warns: ladder-missing)
    count: int  # incidents with this symptom
    recent: list[IncidentView]  # newest first, at most RECENT

    @property
    def mapped(self) -> bool:
        """Whether the ladder is another symptom's, listed for this one through also_for."""
        return self.ladder is not None and self.ladder.data["symptom"] != self.symptom


def paging(ladders: list[Record], incidents: list[IncidentView]) -> list[PagedSymptom]:
    """Every symptom a ladder serves or an incident has, most incidents first, then by name."""
    counts = Counter(str(v.data["symptom"]) for v in incidents)
    served = {s for ladder in ladders for s in ladder_symptoms(ladder.data)}
    symptoms = sorted(served | set(counts), key=lambda s: (-counts[s], s))
    newest = sorted(incidents, key=lambda v: (v.detected, v.id), reverse=True)
    return [PagedSymptom(symptom, meanings().get(symptom, ""), ladder_for(symptom, ladders), counts[symptom],
                         [v for v in newest if v.data["symptom"] == symptom][:RECENT])
            for symptom in symptoms]


def ladder_for(symptom: str, ladders: list[Record]) -> Record | None:
    """The ladder whose own symptom it is, else the first (by id) that lists it under also_for."""
    own = [ladder for ladder in ladders if ladder.data["symptom"] == symptom]
    mapped = [ladder for ladder in ladders if symptom in ladder_symptoms(ladder.data)]
    return min(own or mapped, key=lambda r: r.id, default=None)


@lru_cache(maxsize=1)
def meanings() -> dict[str, str]:
    """{symptom: gloss} from the incident schema's description of the field, the one place the
    symptoms are explained ('crash (processes died), slowdown (throughput dropped), ...')."""
    description = field_spec("incident", "symptom").get("description", "")
    return dict(re.findall(r"([a-z][a-z-]*) \(([^()]*)\)", description))
