"""Every rule id a finding can carry, with its severity and a line of what it catches.

The one list of them: ``tooling validate``'s rules (the store's reading and loading, the schema,
the cross-record rules, the failure-mode rules), ``tooling review``'s and the import mapping's.
Each is written where it is found (``Finding(path, line, col, "too-deep", ...)``);
tests/test_rule_ids.py holds every id used in tooling/ to this table, its severity to the one
written there, and the table to docs/records.md (both editions), where each rule is explained.
"""
from __future__ import annotations

from dataclasses import dataclass

from tooling.records.findings import Severity

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    doc: str  # what it catches, in a line


RULES: dict[str, Rule] = {rule.id: rule for rule in (
    # reading and loading a file (tooling/records/)
    Rule("unreadable", E, "the file cannot be read"),
    Rule("not-a-file", E, "a FIFO, device or socket named like a record"),
    Rule("outside-repository", E, "a symbolic link to a file outside the repository"),
    Rule("file-too-large", E, "more than 1 MiB"),
    Rule("not-utf8", E, "bytes that are not UTF-8"),
    Rule("tab-character", E, "a tab anywhere"),
    Rule("invalid-character", E, "a control character, a line or paragraph separator, a noncharacter"),
    Rule("invalid-number", E, ".inf, .nan, or an integer beyond a signed 64-bit one"),
    Rule("yaml-syntax", E, "YAML that does not parse"),
    Rule("duplicate-key", E, "the same key twice in one mapping"),
    Rule("unsafe-tag", E, "a tag such as !!python/object"),
    Rule("alias-bomb", E, "aliases that expand to more than 100,000 nodes or 1 MiB of text"),
    Rule("invalid-key", E, "a key that is not text"),
    Rule("too-deep", E, "nesting too deep for a record to be read"),
    Rule("empty-file", E, "the file holds no record"),
    Rule("not-a-mapping", E, "the file holds something other than a mapping of fields"),
    # the schema (tooling/rules/schema_rules.py)
    Rule("missing-field", E, "a required field is missing"),
    Rule("unknown-field", W, "a field the schema does not know"),
    Rule("invalid-value", E, "not one of the allowed values"),
    Rule("wrong-type", E, "e.g. text where a number belongs"),
    Rule("invalid-format", E, "an id, timestamp, date or URL in the wrong shape"),
    Rule("invalid-length", E, "too short or too long a text or list"),
    Rule("out-of-range", E, "a number beyond its bounds"),
    Rule("duplicate-item", E, "a list item twice"),
    Rule("schema", E, "any other check of the schema: fields that go together or exclude each other"),
    Rule("too-many-findings", E, "more than 50 problems in one file (as severe as the 51st)"),
    # times (tooling/rules/time_rules.py)
    Rule("invalid-time", E, "a timestamp or date that does not exist on the calendar"),
    Rule("date-out-of-range", E, "a date outside the years 1990-2099"),
    Rule("time-order", E, "times out of order"),
    Rule("clock-skew", W, "a time later than now by more than 5 minutes"),
    # across records (tooling/rules/crossref.py, repeat_rules.py, overlay_rules.py, validate.py)
    Rule("id-mismatch", E, "id differs from the file name"),
    Rule("duplicate-id", E, "two files claim the same id"),
    Rule("unresolved-ref", E, "a reference that names no record"),
    Rule("self-reference", E, "a record that refers to itself"),
    Rule("repeat-cycle", E, "repeat_of links that go round in a loop"),
    Rule("misnamed-file", W, "a file in a record folder that looks meant for a record but is not read as one"),
    Rule("resolved-without-time", E, "status resolved without resolved_at"),
    Rule("ladder-order", E, "a ladder step cheaper than the one before it"),
    Rule("ladder-missing", W, "incidents with a symptom that no ladder serves"),
    Rule("overlay-missing", W, "English text its overlay does not translate"),
    Rule("overlay-unknown", W, "an overlay of nothing the English record has"),
    Rule("stale-draft", W, "a postmortem still in draft 14 days after its incidents were resolved"),
    Rule("rotation-too-small", W, "a live run with fewer than 2 people on call"),
    Rule("night-pages-unbalanced", W, "one person holds more than half of a run's night shifts"),
    # failure modes (tooling/rules/mode_rules.py)
    Rule("unknown-failure-mode", E, "failure_mode names no mode of the catalogue"),
    Rule("failure-mode-suggestion", N, "the signatures or the description suggest a failure mode"),
    Rule("unknown-automation", E, "handled_by names no automation of the catalogue"),
    # tooling review (tooling/analysis/review.py)
    Rule("review-incomplete", E, "a section, or the review's date, missing or empty"),
    Rule("review-action-item", E, "an action item without owner, due date or kind, or none that prevents"),
    Rule("review-incident", E, "an incident the postmortem covers is missing or unresolved"),
    Rule("review-blame", E, "wording that blames a person"),
    # tooling import-history's mapping file (tooling/intake/mapping.py)
    Rule("mapping", E, "a mapping file that does not fit the schema or the table it maps"),
)}
