"""The postmortem reviewer's assistant: is it complete, and is it blameless?

Blameless means asking what must change so that this cannot happen again, never who got it
wrong. Each finding names where it is (keys into the record) and suggests a system-focused
rewording; turning keys into line:col is the caller's business.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Any, Iterator

from tooling.analysis.incidents import IncidentView
from tooling.analysis.postmortems import PostmortemView

SECTIONS = ("summary", "impact", "timeline", "contributing_factors", "went_well", "went_wrong",
            "where_we_got_lucky", "action_items", "review", "lessons")
TEXT_FIELDS = ("summary", "contributing_factors", "went_well", "went_wrong", "where_we_got_lucky", "lessons")

_SYSTEM = "ask what must change so that this cannot happen again"
# (pattern, what to write instead). Patterns with {person} are tried once per known name.
BLAME: tuple[tuple[str, str], ...] = (
    (r"\bhuman errors?\b", "name the missing safeguard: which check, default or automation would have stopped it?"),
    (r"\b(forgot|forgotten|forgetting)\b", "say what step was not done and why the process relied on memory"),
    (r"\bshould have (known|noticed|checked|caught|seen|realized|realised)\b",
     "say where the information was and why it did not reach the people who needed it"),
    (r"\bcareless(ly|ness)?\b", "describe the conditions (time pressure, tooling, unclear procedure), not a person's care"),
    (r"\bnegligen(t|ce)\b", "describe the conditions (time pressure, tooling, unclear procedure), not a person's care"),
    (r"\b(sloppy|lazy|incompetent|reckless|stupid)\b", "describe what the system allowed, not a person's qualities"),
    (r"\b(mistake|blunder)s?\b", "name the change and the safeguard that did not catch it"),
    (r"\b(fault of|at fault|(his|her|their) fault|to blame|blamed?)\b", _SYSTEM),
    (r"\b(didn'?t|did not) bother\b", "say which step was skipped and what made skipping it easy"),
    (r"\b{person}\s+(caused|broke|deleted|pushed|misconfigured|ignored|missed|failed|neglected)\b",
     "make the system the subject: what allowed this change or omission to reach production?"),
    (r"\b(caused by|because of|due to)\s+{person}\b", _SYSTEM),
    (r"\b{person}'s\s+(change|mistake|error|fault|commit|typo)\b", "name the change, not its author"),
)


@dataclass(frozen=True)
class ReviewFinding:
    keys: tuple[str | int, ...]
    rule: str
    message: str
    phrase: str = ""  # the offending words, to find their exact line


def _texts(data: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    for field in TEXT_FIELDS:
        value = data.get(field)
        if isinstance(value, str):
            yield (field,), value
        elif isinstance(value, list):
            yield from (((field, i), v) for i, v in enumerate(value) if isinstance(v, str))
    for i, entry in enumerate(data.get("timeline", [])):
        yield ("timeline", i, "event"), entry.get("event", "")
    for i, item in enumerate(data.get("action_items", [])):
        yield ("action_items", i, "description"), item.get("description", "")
    if isinstance(data.get("impact", {}).get("description"), str):
        yield ("impact", "description"), data["impact"]["description"]


def people(view: PostmortemView) -> set[str]:
    """Everyone named in the postmortem and its incidents, by full name and first name."""
    data = view.data
    names = {*data.get("authors", []), *data.get("reviewers", []), *data.get("review", {}).get("attendees", []),
             *(i.get("owner", "") for i in data.get("action_items", [])),
             *(e.get("by", "") for e in data.get("timeline", []))}
    for incident in view.incidents:
        names |= {incident.data.get("reported_by", ""), *(e.get("by", "") for e in incident.data.get("timeline", []))}
    names.discard("")
    return names | {n.split()[0] for n in names}


def _patterns(names: set[str]) -> list[tuple[re.Pattern[str], str]]:
    alternation = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) or r"(?!x)x"
    return [(re.compile(p.replace("{person}", f"(?:{alternation})"), re.IGNORECASE), hint) for p, hint in BLAME]


def blame(view: PostmortemView) -> list[ReviewFinding]:
    patterns = _patterns(people(view))
    found = []
    for keys, text in _texts(view.data):
        for pattern, hint in patterns:
            match = pattern.search(text)
            if match:
                found.append(ReviewFinding(keys, "review-blame",
                                           f"blaming wording '{match.group(0)}': {hint}", match.group(0)))
                break  # one finding per sentence is enough to send the author back to it
    return found


def completeness(view: PostmortemView, incidents: dict[str, IncidentView]) -> list[ReviewFinding]:
    data, found = view.data, []
    for section in SECTIONS:
        if section not in data:
            found.append(ReviewFinding((), "review-incomplete", f"section '{section}' is missing; expected it filled in"))
        elif data[section] in ("", [], {}, None):
            found.append(ReviewFinding((section,), "review-incomplete", f"section '{section}' is empty; expected it filled in"))
    if "review" in data and not data["review"].get("date"):
        found.append(ReviewFinding(("review",), "review-incomplete", "the review meeting has no date; expected review.date"))
    items = data.get("action_items", [])
    for i, item in enumerate(items):
        for key, what in (("owner", "owner"), ("due", "due date"), ("kind", "kind")):
            if not item.get(key):
                found.append(ReviewFinding(("action_items", i), "review-action-item",
                                           f"action item {i + 1} has no {what}; expected one"))
    if items and not any(i.get("kind") in ("prevent", "detect") and i.get("status") != "wont-do" for i in items):
        found.append(ReviewFinding(("action_items",), "review-action-item",
                                   "no action item prevents or detects a recurrence; expected at least one of kind "
                                   "prevent or detect"))
    for i, incident_id in enumerate(data.get("incidents", [])):
        incident = incidents.get(incident_id)
        if incident is None:
            found.append(ReviewFinding(("incidents", i), "review-incident", f"incident {incident_id} does not exist"))
        elif incident.data["status"] != "resolved":
            found.append(ReviewFinding(("incidents", i), "review-incident",
                                       f"incident {incident_id} is {incident.data['status']}; expected it resolved "
                                       "before the review"))
    return found


def review(view: PostmortemView, incidents: list[IncidentView]) -> list[ReviewFinding]:
    return completeness(view, {v.id: v for v in incidents}) + blame(view)


# The review's state machine: action -> (the status it starts from, the status it leads to).
TRANSITIONS = {"submit": ("draft", "in-review"), "approve": ("in-review", "reviewed")}


class TransitionError(ValueError):
    """The postmortem is not in the status the action starts from."""

    def __init__(self, status: str, expected: str) -> None:
        super().__init__(f"it is {status}; expected it {expected}")
        self.status, self.expected = status, expected


def transition(data: dict[str, Any], action: str, *, reviewers: list[str], today: date) -> list[tuple[list[str], Any]]:
    """The field changes that take a postmortem through ``action`` (submit or approve)."""
    start, end = TRANSITIONS[action]
    if data["status"] != start:
        raise TransitionError(data["status"], start)
    changes: list[tuple[list[str], Any]] = [(["status"], end)]
    if action == "approve":
        names = list(dict.fromkeys([*data.get("reviewers", []), *reviewers]))
        changes += [(["reviewers"], names), (["reviewed_on"], today)]
    return changes
