"""Filling what the schema requires and a row lacks, each filled value reported with its reason.

The failure mode decides what it can: a verbatim log line recognised as a mode is decisive (its
symptom and layer follow); a description only suggests, and only when it suggests exactly one
specific mode. What nothing in the row supports gets the schema's honest fallback (severity and
layer ``unknown``, symptom ``other``) or the mapping's default for it, never an invention.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tooling.catalogue.evidence import primary
from tooling.catalogue.modes import catalogue
from tooling.catalogue.recognise import suggest
from tooling.intake.dates import day_of
from tooling.records.model import same_or_later
from tooling.records.yaml_loader import MAX_INTEGER

TITLE_WORDS = 80  # characters of a description that make a title
_TIMES = re.compile(r"\b(?:happened|occurred|seen|hit us|recurred|repeated|observed|reproduced)\s+(?:again\s+)?"
                    r"(\d+|twice|thrice)(?:\s*(?:times|x))?\b|\b(\d+)\s+(?:occurrences|recurrences)\b", re.I)


@dataclass
class Guessing:
    """One row being completed: its fields, what its text says, and the report of each guess."""

    fields: dict[str, Any]
    text: str  # the row's own words: title, description, keywords, root cause, notes
    description: str
    defaults: dict[str, Any]
    guesses: list[tuple[str, str, str]] = field(default_factory=list)  # (field, value, why)
    decisive: bool = False  # the failure mode is the row's own or recognised from a log line

    def fill(self, name: str, value: Any, why: str) -> None:
        self.fields[name] = value
        self.guesses.append((name, str(value), why))

    def fallback(self, name: str, last_resort: str, why: str) -> None:
        """The mapping's default, which is its word and not reported; else the last resort, reported."""
        if name in self.defaults:
            self.fields[name] = self.defaults[name]
        else:
            self.fill(name, last_resort, why)


def complete(g: Guessing, *, where: str) -> None:
    """Every required field present and consistent; the order matters (mode before symptom)."""
    failure_mode(g)
    symptom(g)
    layer(g)
    if "severity" not in g.fields:
        g.fallback("severity", "unknown", "the row gives no severity that maps")
    status(g)
    title(g, where)
    occurrences(g)


def failure_mode(g: Guessing) -> None:
    if "failure_mode" in g.fields:
        g.decisive = True
        return
    # the same evidence, in the same order, as repeat grouping and validate's suggestions use
    found = primary({**g.fields, "title": g.fields.get("title") or g.text})
    mode = found.mode
    if mode is None or mode.generic:
        return
    if found.source == "signatures":
        g.decisive = True
        via = next((r.via for r in found.recognised if r.mode is mode), "")
        g.fill("failure_mode", mode.id, f"recognised from the log line {(found.line or '')[:60]!r} by {via}")
    elif found.source == "description" and found.narrowed:
        g.fill("failure_mode", mode.id, f"the particular failure of {found.narrowed} the text names")
    elif found.source == "description":  # several named as much: none is picked, a person decides
        g.fill("failure_mode", mode.id, "the only failure mode the text suggests" if found.among == 1 else
               f"the failure mode the text suggests most, of {found.among}")


def symptom(g: Guessing) -> None:
    if "symptom" in g.fields:
        return
    mode = catalogue().get(g.fields.get("failure_mode", ""))
    if mode is not None:
        g.fill("symptom", mode.symptom, f"the symptom of failure mode {mode.id}")
        return
    shared = {m.symptom for m in suggest(g.text) if not m.generic}
    if len(shared) == 1:
        only = shared.pop()
        g.fill("symptom", only, "the symptom of every failure mode the text suggests")
        return
    g.fallback("symptom", "other", "nothing in the row says how it showed")


def layer(g: Guessing) -> None:
    if "layer" in g.fields:
        return
    mode = catalogue().get(g.fields.get("failure_mode", ""))
    if mode is not None and g.decisive:
        g.fill("layer", mode.layer, f"the layer of failure mode {mode.id}")
        return
    g.fallback("layer", "unknown", "the row gives no layer that maps")


def status(g: Guessing) -> None:
    fields = g.fields
    if "status" not in fields:
        if "resolved_at" in fields:
            g.fill("status", "resolved", "the row has a resolution date")
        else:
            g.fallback("status", "open", "no status and no resolution date; set defaults.status: resolved "
                                         "in the mapping if the logbook holds closed incidents")
    if fields["status"] == "resolved" and "resolved_at" not in fields:
        last = fields.get("mitigated_at") or fields["detected_at"]
        g.fill("resolved_at", day_of(last), "resolved without a resolution date: the date it was "
                                            f"{'mitigated' if 'mitigated_at' in fields else 'detected'}, "
                                            "without a time, so no time to resolve is claimed")


def title(g: Guessing, where: str) -> None:
    given = " ".join(str(g.fields.get("title", "")).split())  # one line, whatever the cell held
    if given:
        g.fields["title"] = given
    if len(given) >= 5:
        if len(given) > 200:
            g.fill("title", _first_words(given, 200), "the title was longer than 200 characters; "
                                                      "the whole of it is kept in notes")
        return
    words = _first_words(g.description, TITLE_WORDS)
    if given and words:
        g.fill("title", f"{given}: {words}",
               "the title is shorter than 5 characters; the description's first words added")
    elif given:
        g.fill("title", f"{given} on {where}, {day_of(g.fields['detected_at'])}",
               "the title is shorter than 5 characters; where and when added")
    elif len(words) >= 5:
        g.fill("title", words, "the first words of the description")
    else:
        mode = catalogue().get(g.fields.get("failure_mode", ""))
        what = mode.title if mode else f"{g.fields['symptom'].capitalize()} incident"
        why = "no title, and a description too short for one" if words else "no title and no description"
        g.fill("title", f"{what} on {where}, {day_of(g.fields['detected_at'])}", why)


def _first_words(text: str, limit: int) -> str:
    """The first sentence of the first line, cut at a word to ``limit`` characters."""
    line = " ".join(text.strip().split("\n", 1)[0].split()) if text.strip() else ""
    sentence = re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0]
    if len(sentence) <= limit:
        return sentence.rstrip(".")
    cut = sentence[: limit - 1].rsplit(" ", 1)[0] if " " in sentence[: limit - 1] else sentence[: limit - 1]
    return cut.rstrip(" ,;:") + "…"


def occurrences(g: Guessing) -> None:
    if "occurrences" in g.fields:
        return
    found = _TIMES.search(g.text)
    if found is None:
        return
    said = (found.group(1) or found.group(2)).lower()
    if len(said) > len(str(MAX_INTEGER)):  # a count no record may hold: free text guesses nothing from it
        return
    count = {"twice": 2, "thrice": 3}.get(said) or int(said)
    if 1 < count <= MAX_INTEGER:
        g.fill("occurrences", count, f"the text says {found.group(0)!r}")


def out_of_order(fields: dict[str, Any]) -> list[tuple[str, str]]:
    """(time, the one it must follow) for each time before the one it must follow (started <=
    detected <= mitigated <= resolved): each is dropped and kept in notes by the caller."""
    bad = []
    if "started_at" in fields and same_or_later(fields["started_at"], fields["detected_at"]) is False:
        bad.append(("started_at", "detected_at"))
    earlier = "detected_at"
    for name in ("mitigated_at", "resolved_at"):
        if name in fields:
            if same_or_later(fields[earlier], fields[name]) is False:
                bad.append((name, earlier))
            else:
                earlier = name
    return bad
