"""Repeats a record says it is, in words: "NCCL timeout again", "failed the same way as exp 2".

Logbooks seldom fill in ``repeat_of``; their authors write that a failure is back. Such a record
repeats the incident it names by id ("the same hang as INC-0042"), else the latest
earlier incident of the same place (its run, or its cluster) that shows the same failure: the
same key, else the same primary failure mode or, for the loss's symptoms, the same symptom ("the
same glitch" of a divergence whose first entry named no mode); without a mode, the same
symptom. Words never outweigh
evidence: two incidents whose keys differ (Xid 79 and Xid 48) stay apart whatever their titles
say, and ``not_repeat_of`` still wins (see :mod:`tooling.analysis.repeats`).

The words are read in the title, keywords and root cause only (notes weigh hypotheses and quote
other threads); an incident's id in the notes too.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterator
from typing import Any

from tooling.analysis.identity import Identity
from tooling.analysis.incidents import IncidentView, where_of
from tooling.catalogue.literals import any_of

# Phrases that say "this failure happened before", in English and Korean. Each names the failure
# coming back, not the run: "training again" or "back up again" is a recovery, see _RECOVERY.
# "The same error" asserts identity; "a similar error" only resemblance, unless it says to what.
_FAILURE_NOUNS = r"(failure|error|issue|problem|crash|hang|glitch|spike|symptom|bug|fault|exception|way|behaviou?r)s?"
_PERSISTING = (r"(diverg|crash|fail|hang|hung|spik|blow|blew|explod|break|broke|happen|occur|tim(e|ing) out"
               r"|go(es|ing)? nan|run(s|ning)? out of memory|oom)\w*")
STATED = re.compile(
    r"\bagain\b|\bonce more\b|\brecurr(ing|ent|ed|ence|s)?\b|\bas before\b"
    r"|(?<!never )(?<!not )(?<!n't )\b(happened|seen) before\b"
    rf"|\b(the )?same {_FAILURE_NOUNS}\b|\bsimilar (to|way)\b|\bvery similar\b"
    r"|재발|다시 발생|또 발생|또다시|같은 (문제|오류|에러|증상|장애)|동일한 (문제|오류|에러|증상|장애)"
    # a failure that persists is the same one seen again: "still diverges", "keeps crashing"
    rf"|\b(still|keeps?( on)?|kept( on)?|continu(e|es|ed) to) {_PERSISTING}"
    r"|\bpersist(s|ed|ing)?\b|\bnot (fixed|resolved|gone)\b|계속 (발생|실패|발산|멈)"
    # a failure that struck another attempt as well: "diverged too", "also crashed", "every time"
    rf"|\b{_PERSISTING} (too|as well)\b(?! (often|much|many|early|late|soon|slow|fast|quick|high|low|long|big|small))"
    rf"|\balso {_PERSISTING}"
    r"|\b(each|every) (time|restart|resume|attempt|retry)\b|매번|번번이",
    re.IGNORECASE)
# A word each phrase of STATED has (lower case): a text with none of them states no repeat, and
# substring tests are far cheaper than the expression's alternatives at every position.
_STATED_WORDS = ("again", "once more", "recurr", "before", "same", "similar", "still", "keep", "kept", "continu",
                 "persist", "not ", "too", "as well", "also", "each ", "every ",
                 "재발", "발생", "또다시", "같은", "동일한", "계속", "매번", "번번이")
_ANY_STATED_WORD = any_of(_STATED_WORDS)
# "running again", "restarted again", "LR halved once more": what people did or the run did next,
# not the failure
_RECOVERY = re.compile(r"(?<![\w-])(running|working|up|back|training|healthy|fine|online|available|stable|normal|converging"
                       r"|learning|(re)?start(s|ed|ing)?|resum(e|es|ed|ing)|tr(y|ies|ied|ying)|retr(y|ies|ied|ying)"
                       r"|re-?ran|rerun|re-?submit(s|ted|ting)?|submit(s|ted|ting)?|re-?launch(es|ed|ing)?|launch(es|ed|ing)?"
                       r"|run|ran|check(s|ed|ing)?"
                       # what people did to the run: "LR halved once more", "rolled back again"
                       r"|halv(e|es|ed|ing)|lower(s|ed|ing)?|reduc(e|es|ed|ing)|cut|rais(e|es|ed|ing)"
                       r"|increas(e|es|ed|ing)|rolled back|roll(s|ing)? back|reshuffl(e|es|ed|ing)"
                       r"|skipp(ed|ing)|patch(es|ed|ing)?|fix(es|ed|ing)?)\s+(again|once more)\b", re.IGNORECASE)
_NO_SYMPTOM = ("other", "unknown")
# Symptoms one failure shows by turns: a divergence ends in NaN. "Again" of one of them may follow
# an entry filed as the other. Not a spike: one that recovered is not the divergence that came back.
_KIN = {"nan": "loss", "divergence": "loss"}
# The model's symptoms: "again" of one of them means the latest entry that showed it, whatever cause
# either was found; a crash or a hang "again" means one of its own mode, its causes are too many.
_SHOWN_BY_MODEL = frozenset([*_KIN.values(), "loss-spike"])
_INCIDENT_ID = re.compile(r"\bINC-[0-9]{4,}\b")


def stated_phrase(data: dict[str, Any]) -> str | None:
    """The words by which an incident says it happened before ("again"), or None."""
    texts = [str(data.get("title", "")), *map(str, data.get("keywords", [])), str(data.get("root_cause", ""))]
    lower = "\n".join(texts).lower()
    if _ANY_STATED_WORD.search(lower) is None:
        return None  # most records say nothing of the kind: spare them the expression's scan
    found = (STATED.search(_RECOVERY.sub(" ", text)) for text in texts)
    return next((match.group(0) for match in found if match), None)


def named_incident(data: dict[str, Any], known: Container[str]) -> str | None:
    """The first other incident a record names by its id ("same hang as INC-0042"), or None;
    earlier or not (dates filed later can put it after this one)."""
    texts = [str(data.get("title", "")), *map(str, data.get("keywords", [])), str(data.get("root_cause", "")),
             str(data.get("notes", ""))]
    return next((m for text in texts if "INC-" in text for m in _INCIDENT_ID.findall(text)
                 if m != data.get("id") and m in known), None)


def stated_repeats(views: list[IncidentView], identities: dict[str, Identity]) -> Iterator[tuple[str, str, str]]:
    """(incident, the earlier incident it says it repeats, the words that say so), in one pass
    over ``views`` in detection order: the latest incident of each place and key, mode and
    symptom is all that is kept."""
    ids = [view.id for view in views]  # read once: a view's id goes through two properties
    latest, known = _Latest(), set(ids)
    for incident, view in zip(ids, views):
        identity = identities[incident]
        phrase = stated_phrase(view.data) if view.repeat_of is None else None  # a link says which one already
        if phrase is not None:
            earlier = named_incident(view.data, known) or latest.meant(view, identity)
            if earlier is not None and _compatible(identity, identities[earlier]):
                yield incident, earlier, phrase
        latest.add(view, identity, incident)


def stated_earlier(target: IncidentView, views: list[IncidentView],
                   identify: Callable[[IncidentView], Identity]) -> tuple[str, str] | None:
    """(the earlier incident ``target`` says it repeats, the words), as :func:`stated_repeats`
    finds it, for one incident (`tooling new-incident` shows it among the likely repeats)."""
    phrase = stated_phrase(target.data) if target.repeat_of is None else None
    if phrase is None:
        return None
    every, latest, mine = {v.id: v for v in views}, _Latest(), identify(target)
    for view in views:
        if (view.detected, view.id) < (target.detected, target.id) and view.where == target.where:
            latest.add(view, identify(view))
    named = named_incident(target.data, every)
    earlier = named or latest.meant(target, mine)
    return (earlier, phrase) if earlier is not None and _compatible(mine, identify(every[earlier])) else None


class _Latest:
    """The latest incident of each place by key, by mode and by symptom, as incidents are added
    in detection order; and which of them a stated repeat means (:meth:`meant`)."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str, tuple[str, ...]], tuple[int, str]] = {}  # -> (order added, id)
        self.by_mode: dict[tuple[str, str], tuple[int, str]] = {}
        self.by_symptom: dict[tuple[str, str], tuple[int, str]] = {}
        self.added = 0

    def add(self, view: IncidentView, identity: Identity, incident: str | None = None) -> None:
        """``incident``: the view's id, where the caller has read it already."""
        self.added += 1
        data = view.data
        at, where, mode = (self.added, incident or view.id), where_of(data), _mode(identity)
        if identity.key is not None:
            self.by_key[(where, identity.key)] = at
        if mode:
            self.by_mode[(where, mode)] = at
        self.by_symptom[(where, _kin(data.get("symptom")))] = at

    def meant(self, view: IncidentView, identity: Identity) -> str | None:
        """The earlier incident of ``view``'s place its words mean: the latest of its key (the
        failure it is already known as), else of its mode, or of its symptom where the symptom is
        the model's (a NaN "again" after a divergence: one family, whatever cause either was
        found); without a mode, the latest of its symptom."""
        where, mode, symptom = view.where, _mode(identity), _kin(view.data.get("symptom"))
        if identity.key is not None and (found := self.by_key.get((where, identity.key))):
            return found[1]
        told = symptom not in _NO_SYMPTOM
        same = [self.by_mode.get((where, mode)) if mode else None,
                self.by_symptom.get((where, symptom)) if told and (symptom in _SHOWN_BY_MODEL or not mode) else None]
        found = max((f for f in same if f is not None), default=None)
        return found[1] if found else None


def _mode(identity: Identity) -> str | None:
    """The specific failure mode an incident shows, if any (a catch-all tells nothing)."""
    return identity.mode.id if identity.mode is not None and not identity.mode.generic else None


def _kin(symptom: Any) -> str:
    return _KIN.get(str(symptom), str(symptom))


def _compatible(one: Identity, other: Identity) -> bool:
    """Whether the evidence lets two incidents be one failure: no two different keys."""
    return one.key is None or other.key is None or one.key == other.key
