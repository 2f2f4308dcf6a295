"""Likely repeats by text: tf-idf over title, symptom, layer, root cause and signatures.

Terms are English words and, for Korean text, syllable bigrams of each Hangul word (see
:mod:`tooling.catalogue.hangul`): a particle attached to a noun does not hide it.

Only a suggestion: a person confirms it with ``repeat_of`` or rejects it with
``not_repeat_of``. Candidates come from an inverted index over informative terms, so one
incident is compared with the few that share words with it, never with all of them.
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Iterator
from itertools import filterfalse, repeat
from operator import mul
from sys import intern

from tooling.analysis.incidents import IncidentView
from tooling.catalogue.hangul import hangul_terms
from tooling.catalogue.signatures import normalise

THRESHOLD = 0.3
CAP = 50
_WORD = re.compile(r"[a-z][a-z0-9_]+|xid \d+|errno \d+")
STOP_WORDS = frozenset("the a an and or of on in at to for with from by was were is are be been after "
                  "before during while into than then this that it its as all not no".split())


def terms(view: IncidentView) -> Counter[str]:
    data = view.data
    text = " ".join([data["title"], data.get("root_cause", ""),
                     *(normalise(s) for s in data.get("signatures", []))]).lower()
    words = Counter(filterfalse(STOP_WORDS.__contains__, _WORD.findall(text)))  # in C, not a generator
    if hangul := hangul_terms(text):  # most text has none: no update to make
        words.update(hangul)
    # added as Counter.update({...}) would, without its Python-level walk of a mapping
    words[f"symptom={data['symptom']}"] += 2
    words[f"layer={data['layer']}"] += 1
    return words


@dataclass(frozen=True)
class Suggestion:
    incident: str
    similar: str
    score: float


class Index:
    """tf-idf vectors of incidents and an inverted index over their informative terms."""

    def __init__(self, views: list[IncidentView], counts: dict[str, dict[str, int]] | None = None) -> None:
        """``counts``: each incident's :func:`terms`, where they were kept (analysis.derived)."""
        self.views = {v.id: v for v in views}
        counts = counts if counts is not None else {v.id: terms(v) for v in views}
        df = Counter(t for c in counts.values() for t in c)
        n = max(len(views), 1)
        self.idf = {t: math.log((1 + n) / (1 + d)) + 1 for t, d in df.items()}
        # incidents with the same words as often have the same vector, weighed once, and score
        # the same against any other: each such set (its shape) is scored once per suggestion (a
        # family of failures often is one)
        shapes: dict[tuple[tuple[str, int], ...], tuple[dict[str, float], int]] = {}
        self.vectors, self.shape = {}, {}
        for incident_id, c in counts.items():
            if (found := shapes.get(words := tuple(c.items()))) is None:
                found = shapes[words] = (self._weigh(c), len(shapes))
            self.vectors[incident_id], self.shape[incident_id] = found
        # incident -> the incidents its record judged (not the same failure, or related): few have any,
        # and asking every candidate's record was most of suggesting's time
        self.judged = {v.id: {*v.data.get("not_repeat_of", []), *v.data.get("related", [])} for v in views
                       if v.data.get("not_repeat_of") or v.data.get("related")}
        # terms in more incidents than this are too common to index: a fixed number, so that each
        # incident meets at most so many others per term, however many incidents there are (a cap
        # growing with them made suggesting quadratic: 100,000 incidents met thousands each)
        self.cap = CAP
        self.postings: dict[str, list[str]] = defaultdict(list)
        for incident_id, vector in self.vectors.items():
            for term in vector:
                if df[term] <= self.cap:
                    self.postings[term].append(incident_id)

    def _weigh(self, counts: dict[str, int]) -> dict[str, float]:
        vector = {intern(t): (1 + math.log(c)) * self.idf.get(t, 1.0) for t, c in counts.items()}
        norm = math.sqrt(sum(w * w for w in vector.values())) or 1.0
        return {t: w / norm for t, w in vector.items()}

    def _judged(self, other: str, incident_id: str) -> bool:
        return other in self.judged and incident_id in self.judged[other]

    def similar(self, view: IncidentView, *, limit: int = 5, threshold: float = THRESHOLD) -> list[Suggestion]:
        """The incidents most like ``view`` (which need not be indexed), best first."""
        incident = view.id
        vector = self.vectors.get(incident) or self._weigh(terms(view))
        # A person already judged these: not the same failure, or related but different.
        excluded = {incident, *view.data.get("not_repeat_of", []), *view.data.get("related", [])}
        sharing = {other for term in vector for other in self.postings.get(term, ())}
        sharing = {other for other in sharing - excluded if not self._judged(other, incident)}
        best = self._best(vector, sharing, limit, threshold)
        return [Suggestion(view.id, i, round(s, 2)) for s, i in best]

    def _best(self, vector: dict[str, float], sharing: set[str], limit: int,
              threshold: float) -> list[tuple[float, str]]:
        """(score, incident) of the ``limit`` incidents of ``sharing`` most like ``vector``, best first."""
        # the dot product summed in the vector's order as before, in C: map, not a generator
        words, weights, absent = list(vector), list(vector.values()), repeat(0.0)
        rescored, scored = {}, {}
        for i in sharing:
            shape = self.shape[i]
            if (score := scored.get(shape)) is None:
                score = scored[shape] = sum(map(mul, weights, map(self.vectors[i].get, words, absent)))
            rescored[i] = score
        return sorted(((s, i) for i, s in rescored.items() if s >= threshold), reverse=True)[:limit]

    def similar_each(self, *, limit: int) -> Iterator[tuple[str, list[tuple[float, str]]]]:
        """(incident, :meth:`similar`'s (score, incident) pairs) of every indexed incident, in order.
        Incidents of one vector meet the same others with the same scores: unless a record judged
        one of them (the exclusions of :meth:`similar`), they share one scoring, of their shape."""
        judged = {*self.judged, *(i for others in self.judged.values() for i in others)}
        shared: dict[int, list[tuple[float, str]]] = {}
        for incident, vector in self.vectors.items():
            if incident in judged:
                yield incident, [(s.score, s.similar) for s in self.similar(self.views[incident], limit=limit)]
                continue
            shape = self.shape[incident]
            if (best := shared.get(shape)) is None:  # one more than asked: the incident itself may be among them
                sharing = {other for term in vector for other in self.postings.get(term, ())}
                best = shared[shape] = self._best(vector, sharing, limit + 1, THRESHOLD)
            yield incident, [(round(s, 2), i) for s, i in best if i != incident][:limit]


def likely_repeats(groups: list[list[IncidentView]], index: Index, *, limit: int = 50) -> list[Suggestion]:
    """Pairs from different groups whose text says they may be one failure, best first."""
    group_of = {v.id: n for n, group in enumerate(groups) for v in group}
    seen: set[tuple[str, str]] = set()
    found: list[Suggestion] = []
    for incident, best in index.similar_each(limit=3):
        for score, similar in best:
            pair = tuple(sorted((incident, similar)))
            if group_of[similar] != group_of[incident] and pair not in seen:
                seen.add(pair)  # type: ignore[arg-type]
                later, earlier = sorted(pair, key=lambda i: (index.views[i].detected, i), reverse=True)
                found.append(Suggestion(later, earlier, score))
    return sorted(found, key=lambda s: (-s.score, s.incident))[:limit]
