"""Repeat incidents: which incidents are the same failure happening again, and why.

Grouping is decisive only for evidence a person can check: ``repeat_of`` links, the one key
each incident has (its failure mode with the codes that tell that mode's failures apart, or the
words of an error no specific mode explains; see :mod:`tooling.analysis.identity`), and a
record's own words that its failure is back ("again": :mod:`tooling.analysis.stated`).
``not_repeat_of`` keeps two incidents apart; paraphrases and text similarity only suggest (see
:mod:`tooling.analysis.similarity`). Linear in the number of incidents: union-find over keys,
no comparison of all pairs.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from tooling.analysis.alike import alike, words_of
from tooling.analysis.coded import Coded, Placed, apart, coded
from tooling.analysis.identity import Identity, identify, identify_all
from tooling.analysis.incidents import IncidentView
from tooling.analysis.similarity import Index
from tooling.analysis.stated import stated_earlier, stated_repeats
from tooling.catalogue.codes import shown_identifying
from tooling.messages import N_, Message, message
from tooling.records.load import no_collection

# Why incidents are one failure besides their key's evidence; why an earlier one may be this one
MARKED, ALONE = message(N_("marked repeat_of")), message(N_("one incident"))
SIMILAR = N_("similar wording (%(score)s)")
STATED = N_("the record says it happened before ('%(phrase)s')")
ALIKE = N_("errors alike but for a word: '%(one)s' and '%(other)s'")


class _UnionFind:
    """Sets of incidents; a set never takes in an incident one of its members says it is not."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}
        self.apart: dict[str, set[str]] = {}  # root -> incidents its members were said not to repeat

    def find(self, item: str) -> str:
        root = self.parent.setdefault(item, item)
        while root != self.parent[root]:
            root = self.parent[root]
        while item != root:  # path compression keeps later finds O(1)
            self.parent[item], item = root, self.parent[item]
        return root

    def keep_apart(self, a: str, b: str) -> None:
        self.apart.setdefault(self.find(a), set()).add(b)
        self.apart.setdefault(self.find(b), set()).add(a)

    def union(self, a: str, b: str, *, force: bool = False) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb or (not force and self._conflict(ra, rb)):
            return
        keep, gone = min(ra, rb), max(ra, rb)
        self.parent[gone] = keep
        if gone in self.apart:
            self.apart.setdefault(keep, set()).update(self.apart.pop(gone))

    def _conflict(self, ra: str, rb: str) -> bool:
        return any(self.find(x) == rb for x in self.apart.get(ra, ())) or \
            any(self.find(x) == ra for x in self.apart.get(rb, ()))


def group_ids(views: list[IncidentView]) -> list[list[IncidentView]]:
    """Incidents partitioned into failures; each group in detection order, groups by first incident."""
    return [g.incidents for g in groups_of(views)]


@dataclass
class Group:
    incidents: list[IncidentView]
    reasons: list[Message] = field(default_factory=list)  # why they are one failure, for a person to check

    @property
    def explanation(self) -> tuple[Message, ...]:
        """The reasons, each once; shown as one line by :func:`tooling.messages.render`."""
        return tuple(dict.fromkeys(self.reasons)) or (ALONE,)


CodesOf = Callable[[IncidentView, Identity], Coded]  # an incident's codes: :func:`coded`, or what was kept of it


def groups_of(views: list[IncidentView], identities: dict[str, Identity] | None = None,
              codes: CodesOf | None = None) -> list[Group]:
    with no_collection():  # sets, lists and groups of every incident, without a cycle among them
        return _groups_of(views, identify_all(views) if identities is None else identities,
                          codes or (lambda view, identity: coded(identity, view.data)))


def _groups_of(views: list[IncidentView], identities: dict[str, Identity], codes: CodesOf) -> list[Group]:
    ids = [v.id for v in views]  # read once: each read of a view's id goes through two properties
    sets, first, known = _UnionFind(), {}, set(ids)
    sets.parent = dict(zip(ids, ids))
    for incident, view in zip(ids, views):
        for other in view.data.get("not_repeat_of", ()):
            if other in known:
                sets.keep_apart(incident, other)
    by_id = dict(zip(ids, views))
    placed = Placed(lambda incident: codes(by_id[incident], identities[incident]))
    for incident, view in zip(ids, views):
        key = identities[incident].key
        if key is not None and (earlier := first.setdefault(key, incident)) != incident:
            join, keep = placed.place(incident, key, earlier)
            for other in keep:  # first: a set that holds one of them takes this one in no more
                sets.keep_apart(incident, other)
            for other in join:
                sets.union(incident, other)
        if view.repeat_of in known:
            sets.union(incident, view.repeat_of, force=True)  # a person's link wins over everything
    joined = []  # (an incident, why a link beyond keys joined it to another): said of its final group
    for a, b, why in [*_alike(first), *_stated(views, identities)]:
        sets.union(a, b)
        if sets.find(a) == sets.find(b):  # not when one was said not to repeat the other
            joined.append((a, why))
    linked: dict[str, list[Message]] = defaultdict(list)
    for incident, why in joined:
        linked[sets.find(incident)].append(why)
    members: dict[str, list[IncidentView]] = defaultdict(list)
    for incident, view in zip(ids, views):
        members[sets.find(incident)].append(view)
    groups = [Group(g, _reasons(g, identities) + linked.get(root, [])) for root, g in members.items()]
    return sorted(groups, key=lambda g: (g.incidents[0].detected, g.incidents[0].id))


def _alike(first: dict[tuple[str, ...], str]) -> Iterator[tuple[str, str, Message]]:
    """The first incidents of two keys whose error words differ by a word, and why they are one."""
    for key, earlier in alike(first):
        yield first[key], first[earlier], message(ALIKE, one=words_of(earlier), other=words_of(key))


def _stated(views: list[IncidentView], identities: dict[str, Identity]) -> Iterator[tuple[str, str, Message]]:
    for incident, earlier, phrase in stated_repeats(views, identities):
        yield incident, earlier, message(STATED, phrase=phrase.lower())


def _reasons(group: list[IncidentView], identities: dict[str, Identity]) -> list[Message]:
    if len(group) < 2:
        return []
    ids = {v.id: v for v in group}
    by_key: dict[tuple[str, ...], list[Identity]] = defaultdict(list)  # in order of first member, as Counter's
    for found in map(identities.__getitem__, ids):
        if found.key is not None:
            by_key[found.key].append(found)
    reasons = []
    for members in sorted(by_key.values(), key=len, reverse=True):  # stable: Counter.most_common's order
        if len(members) > 1 and (why := members[0].why(_naming_codes(members))) is not None:
            reasons.append(why)
    if any(v.repeat_of in ids for v in group):
        reasons.append(MARKED)
    return reasons


def _naming_codes(members: list[Identity]) -> list[str]:
    """The codes that name the failure, of every member, sorted. Members share the recognitions
    of lines that recognise alike (see :func:`tooling.catalogue.recognise.recognise`): each read once."""
    recognised = {id(r): r for m in members for r in m.recognised}.values()
    return sorted({c for r in recognised for c in shown_identifying(r.identifying)})


def likely_repeats_of(target: IncidentView, views: list[IncidentView], index: Index, *,
                      limit: int = 5) -> list[tuple[str, Message]]:
    """(incident id, why) for the incidents ``target`` most likely repeats: the one its own words
    say it repeats, then the same key, then similar wording."""
    known: dict[str, Identity] = {}  # each incident identified once, for the words and the key alike

    def identity(view: IncidentView) -> Identity:
        return known[view.id] if view.id in known else known.setdefault(view.id, identify(view))

    key = identity(target).key
    said = stated_earlier(target, views, identity)
    stated = [(said[0], message(STATED, phrase=said[1].lower()))] if said else []
    mine = coded(identity(target), target.data) if key is not None else {}
    same = [(v.id, why) for v in reversed(views) if v.id != target.id and key is not None
            and (found := identity(v)).key == key and (why := found.same) is not None
            and not (mine and apart(mine, coded(found, v.data)))]  # other codes: another failure of the mode
    by_text = [(s.similar, message(SIMILAR, score=f"{s.score:.2f}")) for s in index.similar(target, limit=limit)]
    seen: set[str] = set()
    return [(i, why) for i, why in stated + same + by_text
            if not (i in seen or seen.add(i))][:limit]  # type: ignore[func-returns-value]


def earlier_repeats_of(target: IncidentView, views: list[IncidentView], index: Index, *,
                       limit: int = 3) -> list[tuple[str, Message]]:
    """What filing ``target`` would have suggested: :func:`likely_repeats_of` among the incidents
    detected before it (`tooling repeats --for`; scored as recall at 3 on the labelled corpora)."""
    before = [v for v in views if (v.detected, v.id) < (target.detected, target.id)]
    earlier = {v.id for v in before}
    found = likely_repeats_of(target, [*before, target], index, limit=limit + len(views) - len(before))
    return [(i, why) for i, why in found if i in earlier][:limit]

